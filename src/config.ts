import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { inspect } from "node:util";

/** One chain the service supports; optional fields are filled by later features (RPC, paymaster contracts). */
export interface ChainConfig {
  chainId: number;
  name: string;
  /** JSON-RPC of a node: needed for gas estimation, deposit checks and settlement; without it the chain only signs. */
  rpcUrl?: string;
  /** ERC-4337 bundler JSON-RPC, used for gas estimation when set. */
  bundlerUrl?: string;
  entryPoint?: string;
  verifyingPaymaster?: string;
  tokenPaymaster?: string;
  /** ERC20 mode: the fee tokens the token paymaster accepts on this chain (requires tokenPaymaster, except on 31337). */
  tokens?: TokenConfig[];
  /**
   * EntryPoint v0.7 and v0.8 served on this chain, by version (the chains file's `entryPoints` object). The top-level
   * `entryPoint`/`verifyingPaymaster`/`tokenPaymaster` are v0.6's. A version not listed is refused with a reason,
   * except on the local chain 31337, where every version is served at the project's deterministic addresses.
   */
  entryPoints?: Partial<Record<LaterEntryPointVersion, EntryPointConfig>>;
}

/** The EntryPoint versions after v0.6, which share the packed user operation. */
export type LaterEntryPointVersion = "0.7" | "0.8";
export const LATER_ENTRY_POINT_VERSIONS: readonly LaterEntryPointVersion[] = ["0.7", "0.8"];

/** Our contracts for one EntryPoint version on one chain. Addresses lowercase. */
export interface EntryPointConfig {
  /** Defaults to the version's canonical address. */
  entryPoint?: string;
  verifyingPaymaster?: string;
  tokenPaymaster?: string;
}

/**
 * Where a fee token's exchange rate comes from. `fixedRate`: token base units per 1e18 wei, signed as given (price
 * source 0). `aggregator`: a Chainlink-style feed (AggregatorV3Interface) of whole tokens per whole native token, read
 * through the chain's RPC for quotes and read again by the contract when the operation runs (price source 1);
 * `maxAgeSeconds` refuses an answer older than that (the contract's own maxPriceAge applies as well).
 */
export type TokenPriceConfig = { fixedRate: bigint } | { aggregator: string; maxAgeSeconds?: number };

/** One fee token of a chain, as the chains file gives it (`tokens` of a chain entry). */
export interface TokenConfig {
  /** Lowercase. */
  address: string;
  symbol: string;
  decimals: number;
  logoUrl?: string;
  price: TokenPriceConfig;
  /** Millionths charged on top of the gas cost: 1e6 (none) to 2e6 (double); DEFAULT_TOKEN_MARKUP when not given. */
  markup: number;
  /** US dollars per whole token, for a quote's maxGasFeeUSD (1 for a USD stablecoin); without it maxGasFeeUSD is null. */
  usdPrice?: number;
}

/** 10 % on top of the gas cost, when a token's configuration names no markup. */
export const DEFAULT_TOKEN_MARKUP = 1_100_000;

/** A value that must never reach a log or a response: it prints as [secret] however it is serialised. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[secret]";
  }
  toJSON(): string {
    return "[secret]";
  }
  [inspect.custom](): string {
    return "[secret]";
  }
}

/** Where the verifying signer's key comes from: the environment, or a key file (made on first start if absent). */
export type SignerKeySource =
  | { kind: "env"; privateKey: Secret }
  | { kind: "file"; path: string; createIfMissing: boolean };

/** Where the master key of the per-account webhook secrets comes from; same rules as the signer key. */
export type WebhookSigningKeySource =
  | { kind: "env"; key: Secret }
  | { kind: "file"; path: string; createIfMissing: boolean };

/** Outgoing webhook calls (docs/management-api.md, 'How the service calls webhooks'). */
export interface WebhookConfig {
  timeoutMs: number;
  /** Whether webhook addresses may be private, loopback or link-local (development), and why, for the start log. */
  allowPrivate: boolean;
  allowPrivateReason: string;
  signingKey: WebhookSigningKeySource;
}

/** The HTTP server's limits against slow and numerous clients (src/app.ts). */
export interface HttpLimits {
  /** A request's headers must arrive within this (a client dripping header bytes is cut off). */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this; above a load balancer's idle timeout (60 s on AWS). */
  keepAliveTimeoutMs: number;
  /** Connections beyond this many open ones are closed at once. */
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 72_000,
  maxConnections: 4096,
};

/** Per client address throttling of wrong credentials (src/http/failureThrottle.ts). */
export interface FailureThrottleConfig {
  /** Wrong credentials an address may send per window; then it gets 429 until the window ends. 0: no throttling. */
  maxFailures: number;
  windowMs: number;
}

export const DEFAULT_FAILURE_THROTTLE: FailureThrottleConfig = { maxFailures: 30, windowMs: 60_000 };

/** Fastify's trustProxy: whose X-Forwarded-For to believe for the client address (false: the socket's peer). */
export type TrustProxy = boolean | number | string[];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Unset means the embedded PGlite database in `dataDir`. */
  databaseUrl?: string;
  logLevel: string;
  bodyLimitBytes: number;
  http: HttpLimits;
  failureThrottle: FailureThrottleConfig;
  trustProxy: TrustProxy;
  chains: ReadonlyMap<number, ChainConfig>;
  signerKey: SignerKeySource;
  webhooks: WebhookConfig;
  /**
   * `auto`: when chain 31337 is listed without an rpcUrl, the service starts anvil as its local development chain
   * (src/chain/localChain.ts). `off`: 31337 only signs. Defaults to `off` with DATABASE_URL or NODE_ENV=production.
   */
  localChain: "auto" | "off";
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken?: Secret;
  /** How long a shutdown may take: in-flight requests are answered and the group commit flushed within it. */
  shutdownTimeoutMs: number;
  /** Readable logs (pino-pretty) for a terminal during development; JSON lines otherwise. */
  prettyLogs: boolean;
}

/** A configuration value the service refuses to start with; the message names the variable and the problem. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const DEFAULT_CHAINS_FILE = path.join(packageRoot(import.meta.dirname), "config", "chains.json");

/** The folder of the project's package.json: src/ in a checkout, dist/ or dist/cli/ in a build, the same answer. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return path.join(from, "..");
  }
}

/** The only reader of process.env and of the chains file: everything is checked once, at start. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  stdoutIsTty: boolean = process.stdout.isTTY === true,
): Config {
  const chainsFile = env.CHAINS_FILE || DEFAULT_CHAINS_FILE;
  const dataDir = path.resolve(env.DATA_DIR || "./data");
  const url = databaseUrl(env.DATABASE_URL);
  const host = env.HOST || "127.0.0.1";
  return {
    port: integerIn(env, "PORT", 3000, 0, 65535),
    host,
    dataDir,
    databaseUrl: url,
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    bodyLimitBytes: integerIn(env, "BODY_LIMIT_BYTES", 512 * 1024, 1024, 16 * 1024 * 1024),
    http: httpLimits(env),
    failureThrottle: {
      maxFailures: integerIn(env, "AUTH_FAILURE_LIMIT", DEFAULT_FAILURE_THROTTLE.maxFailures, 0, 1_000_000),
      windowMs:
        1000 * integerIn(env, "AUTH_FAILURE_WINDOW_SECONDS", DEFAULT_FAILURE_THROTTLE.windowMs / 1000, 1, 86_400),
    },
    trustProxy: trustProxy(env.TRUST_PROXY),
    chains: readChains(chainsFile),
    signerKey: signerKey(env, dataDir, url !== undefined),
    webhooks: {
      timeoutMs: integerIn(env, "WEBHOOK_TIMEOUT_MS", 2000, 100, 30_000),
      ...allowPrivateWebhooks(env, host),
      signingKey: webhookSigningKey(env, dataDir, url !== undefined),
    },
    // A production start (PostgreSQL, or NODE_ENV=production) never runs a development chain unless asked to.
    localChain: oneOf(
      env,
      "LOCAL_CHAIN",
      ["auto", "off"],
      url === undefined && env.NODE_ENV !== "production" ? "auto" : "off",
    ) as "auto" | "off",
    ...metricsToken(env),
    shutdownTimeoutMs: integerIn(env, "SHUTDOWN_TIMEOUT_MS", 10_000, 1_000, 120_000),
    prettyLogs: stdoutIsTty && env.NODE_ENV !== "production",
  };
}

function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const d = DEFAULT_HTTP_LIMITS;
  const limits = {
    headersTimeoutMs: integerIn(env, "HTTP_HEADERS_TIMEOUT_MS", d.headersTimeoutMs, 100, 300_000),
    requestTimeoutMs: integerIn(env, "HTTP_REQUEST_TIMEOUT_MS", d.requestTimeoutMs, 100, 600_000),
    keepAliveTimeoutMs: integerIn(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", d.keepAliveTimeoutMs, 100, 600_000),
    maxConnections: integerIn(env, "HTTP_MAX_CONNECTIONS", d.maxConnections, 1, 1_000_000),
  };
  // Node refuses a headers timeout longer than the request's, which covers the headers too.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

/** `false` (default), `true`, a number of proxy hops, or a comma-separated list of proxy addresses and CIDR ranges. */
function trustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined || raw === "" || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split("/");
    const family = isIP(address ?? "");
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || rest.length > 0) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false, a number of hops or a comma-separated list of IP addresses and CIDR ranges, got "${entry}"`,
      );
    }
  }
  return entries;
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

/** Private webhook addresses are a development convenience: on by default only for a loopback bind outside production. */
function allowPrivateWebhooks(env: NodeJS.ProcessEnv, host: string) {
  const decided = (allowPrivate: boolean, allowPrivateReason: string) => ({ allowPrivate, allowPrivateReason });
  const explicit = oneOf(env, "WEBHOOK_ALLOW_PRIVATE", ["true", "false"], "");
  if (explicit !== "") return decided(explicit === "true", `WEBHOOK_ALLOW_PRIVATE=${explicit}`);
  const change = "set WEBHOOK_ALLOW_PRIVATE=true to allow them";
  if (env.NODE_ENV === "production") return decided(false, `NODE_ENV is production (${change})`);
  if (!LOOPBACK_HOST.test(host)) return decided(false, `HOST ${host} is not a loopback address (${change})`);
  return decided(
    true,
    `HOST ${host} is loopback and NODE_ENV is not production (WEBHOOK_ALLOW_PRIVATE=false refuses them)`,
  );
}

function webhookSigningKey(env: NodeJS.ProcessEnv, dataDir: string, sharedDatabase: boolean): WebhookSigningKeySource {
  const fromEnv = env.WEBHOOK_SIGNING_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    if (!PRIVATE_KEY.test(fromEnv)) throw new ConfigError("WEBHOOK_SIGNING_KEY must be 0x followed by 64 hex digits");
    return { kind: "env", key: new Secret(fromEnv) };
  }
  if (env.WEBHOOK_SIGNING_KEY_FILE) {
    return { kind: "file", path: path.resolve(env.WEBHOOK_SIGNING_KEY_FILE), createIfMissing: false };
  }
  // Instances that share a PostgreSQL must give every account the same secret, so one of them cannot make it up.
  return { kind: "file", path: path.join(dataDir, "webhook.key"), createIfMissing: !sharedDatabase };
}

const PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/;
const METRICS_TOKEN = /^[A-Za-z0-9._~+/=-]{16,256}$/;

function metricsToken(env: NodeJS.ProcessEnv): { metricsToken?: Secret } {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === "") return {};
  // A short token can be guessed; other characters cannot travel in a Bearer header. The message never shows it.
  if (!METRICS_TOKEN.test(raw)) {
    throw new ConfigError("METRICS_TOKEN must be 16 to 256 characters of A-Z a-z 0-9 . _ ~ + / = -");
  }
  return { metricsToken: new Secret(raw) };
}

function signerKey(env: NodeJS.ProcessEnv, dataDir: string, sharedDatabase: boolean): SignerKeySource {
  const fromEnv = env.SIGNER_PRIVATE_KEY;
  if (fromEnv !== undefined && fromEnv !== "") {
    // The message names the variable, never its value.
    if (!PRIVATE_KEY.test(fromEnv)) throw new ConfigError("SIGNER_PRIVATE_KEY must be 0x followed by 64 hex digits");
    return { kind: "env", privateKey: new Secret(fromEnv) };
  }
  if (env.SIGNER_KEY_FILE) return { kind: "file", path: path.resolve(env.SIGNER_KEY_FILE), createIfMissing: false };
  // Instances that share a PostgreSQL must sign with one key, so a key made up by one of them is no default there.
  return { kind: "file", path: path.join(dataDir, "signer.key"), createIfMissing: !sharedDatabase };
}

function integerIn(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function oneOf(env: NodeJS.ProcessEnv, name: string, allowed: string[], fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got "${raw}"`);
  return raw;
}

function databaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === "") return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError("DATABASE_URL is not a valid URL");
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") {
    throw new ConfigError("DATABASE_URL must start with postgres:// or postgresql://");
  }
  return raw;
}

export function readChains(file: string): ReadonlyMap<number, ChainConfig> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`chains file ${file} cannot be read as JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed) || parsed.length === 0) {
    throw new ConfigError(`chains file ${file} must hold a non-empty JSON array of chains`);
  }
  const chains = new Map<number, ChainConfig>();
  parsed.forEach((entry, index) => {
    const chain = parseChain(entry, `chains file ${file}, entry ${index}`);
    if (chains.has(chain.chainId)) throw new ConfigError(`chains file ${file} lists chainId ${chain.chainId} twice`);
    chains.set(chain.chainId, chain);
  });
  return chains;
}

function parseChain(entry: unknown, where: string): ChainConfig {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigError(`${where}: must be an object`);
  }
  const { chainId, name, rpcUrl, bundlerUrl, entryPoint, verifyingPaymaster, tokenPaymaster, tokens, entryPoints } =
    entry as Record<string, unknown>;
  if (typeof chainId !== "number" || !Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new ConfigError(`${where}: chainId must be a positive integer`);
  }
  if (typeof name !== "string" || name === "") throw new ConfigError(`${where}: name must be a non-empty string`);
  const chain: ChainConfig = { chainId, name };
  for (const [field, value] of Object.entries({ rpcUrl, bundlerUrl })) {
    if (value === undefined) continue;
    if (typeof value !== "string" || !/^https?:\/\//.test(value)) {
      throw new ConfigError(`${where}: ${field} must be an http(s) URL`);
    }
    chain[field as "rpcUrl" | "bundlerUrl"] = value;
  }
  for (const [field, value] of Object.entries({ entryPoint, verifyingPaymaster, tokenPaymaster })) {
    if (value === undefined) continue;
    if (typeof value !== "string" || !ADDRESS.test(value)) {
      throw new ConfigError(`${where}: ${field} must be a 20-byte hex address`);
    }
    chain[field as "entryPoint" | "verifyingPaymaster" | "tokenPaymaster"] = value;
  }
  if (tokens !== undefined) chain.tokens = parseTokens(tokens, chain, where);
  if (entryPoints !== undefined) chain.entryPoints = parseEntryPoints(entryPoints, where);
  return chain;
}

function parseEntryPoints(value: unknown, where: string): Partial<Record<LaterEntryPointVersion, EntryPointConfig>> {
  const expected = `entryPoints must be an object keyed by EntryPoint version (${LATER_ENTRY_POINT_VERSIONS.join(", ")})`;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigError(`${where}: ${expected}`);
  const result: Partial<Record<LaterEntryPointVersion, EntryPointConfig>> = {};
  for (const [version, served] of Object.entries(value)) {
    if (!(LATER_ENTRY_POINT_VERSIONS as readonly string[]).includes(version)) {
      throw new ConfigError(
        `${where}: ${expected}; "${version}" is not one of them (v0.6 uses the chain's own fields)`,
      );
    }
    const at = `${where}, entryPoints["${version}"]`;
    if (typeof served !== "object" || served === null || Array.isArray(served)) {
      throw new ConfigError(
        `${at}: must be an object with verifyingPaymaster, tokenPaymaster and entryPoint addresses`,
      );
    }
    const config: EntryPointConfig = {};
    for (const [field, address] of Object.entries(served as Record<string, unknown>)) {
      if (field !== "entryPoint" && field !== "verifyingPaymaster" && field !== "tokenPaymaster") {
        throw new ConfigError(`${at}: unknown field ${field} (entryPoint, verifyingPaymaster, tokenPaymaster)`);
      }
      if (typeof address !== "string" || !ADDRESS.test(address)) {
        throw new ConfigError(`${at}: ${field} must be a 20-byte hex address`);
      }
      config[field] = address.toLowerCase();
    }
    result[version as LaterEntryPointVersion] = config;
  }
  return result;
}

/** The local chain's token paymaster has a deterministic default address (src/chain/sponsoringChains.ts). */
const CHAIN_WITH_DEFAULT_TOKEN_PAYMASTER = 31337;
const DECIMAL_INTEGER = /^\d{1,78}$/;
const MIN_TOKEN_MARKUP = 1_000_000;
const MAX_TOKEN_MARKUP = 2_000_000;
const MAX_UINT256 = (1n << 256n) - 1n;

function parseTokens(value: unknown, chain: ChainConfig, where: string): TokenConfig[] {
  if (!Array.isArray(value)) throw new ConfigError(`${where}: tokens must be an array`);
  if (value.length > 0 && !chain.tokenPaymaster && chain.chainId !== CHAIN_WITH_DEFAULT_TOKEN_PAYMASTER) {
    throw new ConfigError(`${where}: tokens need the chain's tokenPaymaster address`);
  }
  const tokens = value.map((entry, index) => parseToken(entry, `${where}, tokens[${index}]`));
  const seen = new Set<string>();
  for (const token of tokens) {
    if (seen.has(token.address)) throw new ConfigError(`${where}: token ${token.address} is listed twice`);
    seen.add(token.address);
  }
  return tokens;
}

function parseToken(entry: unknown, where: string): TokenConfig {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    throw new ConfigError(`${where}: must be an object`);
  }
  const { address, symbol, decimals, logoUrl, price, markup, usdPrice } = entry as Record<string, unknown>;
  if (typeof address !== "string" || !ADDRESS.test(address) || /^0x0{40}$/.test(address)) {
    throw new ConfigError(`${where}: address must be a non-zero 20-byte hex address`);
  }
  const label = `${where} (${address})`;
  if (typeof symbol !== "string" || symbol === "" || symbol.length > 32) {
    throw new ConfigError(`${label}: symbol must be a non-empty string of at most 32 characters`);
  }
  if (typeof decimals !== "number" || !Number.isInteger(decimals) || decimals < 0 || decimals > 36) {
    throw new ConfigError(`${label}: decimals must be a whole number from 0 to 36`);
  }
  if (logoUrl !== undefined && (typeof logoUrl !== "string" || !/^https?:\/\/\S+$/.test(logoUrl))) {
    throw new ConfigError(`${label}: logoUrl must be an http(s) URL`);
  }
  const resolvedMarkup = markup === undefined ? DEFAULT_TOKEN_MARKUP : markup;
  if (
    typeof resolvedMarkup !== "number" ||
    !Number.isInteger(resolvedMarkup) ||
    resolvedMarkup < MIN_TOKEN_MARKUP ||
    resolvedMarkup > MAX_TOKEN_MARKUP
  ) {
    throw new ConfigError(
      `${label}: markup must be a whole number of millionths from ${MIN_TOKEN_MARKUP} (none) to ${MAX_TOKEN_MARKUP} ` +
        "(double), e.g. 1100000 for 10 %",
    );
  }
  if (usdPrice !== undefined && (typeof usdPrice !== "number" || !Number.isFinite(usdPrice) || usdPrice <= 0)) {
    throw new ConfigError(`${label}: usdPrice must be a positive number (US dollars per whole token)`);
  }
  const token: TokenConfig = {
    address: address.toLowerCase(),
    symbol,
    decimals,
    price: parseTokenPrice(price, label),
    markup: resolvedMarkup,
  };
  if (logoUrl !== undefined) token.logoUrl = logoUrl as string;
  if (usdPrice !== undefined) token.usdPrice = usdPrice;
  return token;
}

function parseTokenPrice(value: unknown, label: string): TokenPriceConfig {
  const expected =
    'price must be {"fixedRate": "<token base units per 1e18 wei>"} or {"aggregator": "0x…", "maxAgeSeconds"?: n}';
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new ConfigError(`${label}: ${expected}`);
  const { fixedRate, aggregator, maxAgeSeconds, ...rest } = value as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new ConfigError(`${label}: price has unknown field ${unknown[0]}; ${expected}`);
  if ((fixedRate === undefined) === (aggregator === undefined)) {
    throw new ConfigError(`${label}: ${expected} (exactly one of the two)`);
  }
  if (fixedRate !== undefined) {
    const rate =
      typeof fixedRate === "string" && DECIMAL_INTEGER.test(fixedRate)
        ? BigInt(fixedRate)
        : typeof fixedRate === "number" && Number.isSafeInteger(fixedRate)
          ? BigInt(fixedRate)
          : undefined;
    if (rate === undefined || rate <= 0n || rate > MAX_UINT256) {
      throw new ConfigError(
        `${label}: price.fixedRate must be a positive whole number of token base units per 1e18 wei, as a decimal string`,
      );
    }
    if (maxAgeSeconds !== undefined)
      throw new ConfigError(`${label}: price.maxAgeSeconds applies to an aggregator only`);
    return { fixedRate: rate };
  }
  if (typeof aggregator !== "string" || !ADDRESS.test(aggregator) || /^0x0{40}$/.test(aggregator)) {
    throw new ConfigError(`${label}: price.aggregator must be a non-zero 20-byte hex address`);
  }
  if (maxAgeSeconds === undefined) return { aggregator: aggregator.toLowerCase() };
  if (typeof maxAgeSeconds !== "number" || !Number.isInteger(maxAgeSeconds) || maxAgeSeconds < 1) {
    throw new ConfigError(`${label}: price.maxAgeSeconds must be a positive whole number of seconds`);
  }
  return { aggregator: aggregator.toLowerCase(), maxAgeSeconds };
}
