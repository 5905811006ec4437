import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import path from "node:path";
import { inspect } from "node:util";
import {
  type ChainEntry,
  ChainsFileSchema,
  type EntryPointContracts,
  EntryPointsSchema,
  NATIVE_USD_PRICE_FORMS,
  type NativeUsdPriceEntry,
  PRICE_FORMS,
  type TokenEntry,
} from "./schemas/config/chainsFile";
import {
  ENVIRONMENT_VARIABLES,
  type Environment,
  EnvironmentSchema,
  TRUST_PROXY_FORMS,
} from "./schemas/config/environment";
import {
  ARBITRUM_NODE_INTERFACE,
  DEFAULT_L1_MARGIN_PERCENT,
  impliedL1DataFeeModel,
  type L1DataFeeEntry,
  OP_STACK_GAS_PRICE_ORACLE,
} from "./schemas/config/l1DataFee";
import { isSecret, problemAt, schemaProblems } from "./schemas/config/problems";

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
  /** The native token's dollar price, for USD spending limits and cost caps; without it USD rules are refused. */
  nativeUsdPrice?: NativeUsdPriceConfig;
  /** How the chain charges for L1 data (the chains file's `l1DataFee`, else the chain id's model); absent: none. */
  l1DataFee?: L1DataFeeConfig;
}

/**
 * A chain's L1 data fee as the service prices it. `op-stack` and `arbitrum` are computed through the chain's node at
 * `oracle`, plus `marginPercent`; `bundler` is a rollup with a model of its own, which only the chain's bundler's
 * estimates carry (the service then never estimates gas without that bundler). `source` says where the model came from.
 */
export type L1DataFeeConfig =
  | { model: "none"; source: L1DataFeeSource }
  | { model: "op-stack" | "arbitrum"; oracle: string; marginPercent: number; source: L1DataFeeSource }
  | { model: "bundler"; network: string; source: "chain id" };

export type L1DataFeeSource = "chains file" | "chain id";

/**
 * Where the native token's dollar price comes from. `fixed`: US dollars per whole native token, a positive decimal
 * text, used as written. `aggregator`: a Chainlink-style feed (AggregatorV3Interface) of dollars per whole native
 * token, read through the chain's RPC; an answer older than `maxAgeSeconds` is refused.
 */
export type NativeUsdPriceConfig = { fixed: string } | { aggregator: string; maxAgeSeconds: number };

/** The EntryPoint versions after v0.6, which share the packed user operation: the chains file's `entryPoints` keys. */
export type LaterEntryPointVersion = keyof typeof EntryPointsSchema.properties;
/** @public for the EntryPoint v0.7/v0.8 work in flight, which serves the versions listed here. */
export const LATER_ENTRY_POINT_VERSIONS = Object.keys(
  EntryPointsSchema.properties,
) as readonly LaterEntryPointVersion[];

/** Our contracts for one EntryPoint version on one chain (the entryPoint defaults to the version's canonical one). */
export type EntryPointConfig = EntryPointContracts;

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
  /**
   * The token has a permit the up-front token paymaster runs in validation (USDC's: EIP-2612 with a bytes signature,
   * ERC-1271, no clock read at the maximum deadline): a wallet may pay its first operation with a signed permit.
   */
  permit?: boolean;
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

/**
 * Where the verifying signer's key is: the environment, a key file (made on first start if absent), or a PKCS#11
 * token, where it stays (the service holds no copy of it).
 */
export type SignerKeySource =
  | { kind: "env"; privateKey: Secret }
  | { kind: "file"; path: string; createIfMissing: boolean }
  | Pkcs11SignerConfig;

/** A key in a hardware security module (or SoftHSM2), reached through its PKCS#11 module (SIGNER_PKCS11_*). */
export interface Pkcs11SignerConfig {
  kind: "pkcs11";
  /** The module's shared library, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  module: string;
  tokenLabel: string;
  keyLabel: string;
  /** A file holding the user PIN, readable by its owner only. */
  pinFile: string;
  /** Sessions kept open: signatures in flight at once (a network HSM's latency is paid per session). */
  sessions: number;
}

/** Signatures a PKCS#11 signer can have in flight at once unless SIGNER_PKCS11_SESSIONS says otherwise. */
const DEFAULT_PKCS11_SESSIONS = 4;

const PKCS11_SETTINGS = [
  "SIGNER_PKCS11_MODULE",
  "SIGNER_PKCS11_TOKEN_LABEL",
  "SIGNER_PKCS11_KEY_LABEL",
  "SIGNER_PKCS11_PIN_FILE",
] as const;

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
   * (src/devChain/localChain.ts). `off`: 31337 only signs. Defaults to `off` with DATABASE_URL or NODE_ENV=production.
   */
  localChain: "auto" | "off";
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken?: Secret;
  /** The folder of the built web dashboard served at /dashboard; absent with DASHBOARD=off. */
  dashboardFolder?: string;
  /** How long a shutdown may take: in-flight requests are answered and the group commit flushed within it. */
  shutdownTimeoutMs: number;
  /** Readable logs (pino-pretty) for a terminal during development; JSON lines otherwise. */
  prettyLogs: boolean;
}

/**
 * The configuration the service refuses to start with: every problem found, each naming the variable (or the chains
 * file, entry and field) and what is wrong, so that one start tells an operator all there is to fix.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === "string" ? [problems] : problems;
    super(
      list.length === 1
        ? (list[0] as string)
        : `${list.length} configuration problems:\n${list.map((problem) => `  - ${problem}`).join("\n")}`,
    );
    this.problems = list;
  }
}

const DEFAULT_CHAINS_FILE = path.join(packageRoot(import.meta.dirname), "config", "chains.json");

/** Where the dashboard's build lands (scripts/buildDashboard.ts), in a checkout and in an installed pack alike. */
const DEFAULT_DASHBOARD_FOLDER = path.join(packageRoot(import.meta.dirname), "dashboard", "dist");

/** The folder of the project's package.json: src/ in a checkout, dist/ or dist/cli/ in a build, the same answer. */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) return path.join(from, "..");
  }
}

/**
 * The only reader of process.env and of the chains file: everything is checked once, at start, and every problem is
 * reported together in one ConfigError.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  stdoutIsTty: boolean = process.stdout.isTTY === true,
): Config {
  const problems: string[] = [];
  const vars = checkedEnvironment(env, problems);
  const dataDir = path.resolve(vars.DATA_DIR ?? "./data");
  const url = databaseUrl(vars.DATABASE_URL, problems);
  const host = vars.HOST ?? "127.0.0.1";
  const nodeEnv = vars.NODE_ENV;
  const config: Config = {
    port: vars.PORT ?? 3000,
    host,
    dataDir,
    databaseUrl: url,
    logLevel: vars.LOG_LEVEL ?? "info",
    bodyLimitBytes: vars.BODY_LIMIT_BYTES ?? 512 * 1024,
    http: httpLimits(vars, problems),
    failureThrottle: {
      maxFailures: vars.AUTH_FAILURE_LIMIT ?? DEFAULT_FAILURE_THROTTLE.maxFailures,
      windowMs: 1000 * (vars.AUTH_FAILURE_WINDOW_SECONDS ?? DEFAULT_FAILURE_THROTTLE.windowMs / 1000),
    },
    trustProxy: trustProxy(vars.TRUST_PROXY, problems),
    chains: readChainsFile(vars.CHAINS_FILE ?? DEFAULT_CHAINS_FILE, problems),
    signerKey: signerKey(vars, dataDir, url !== undefined, problems),
    webhooks: {
      timeoutMs: vars.WEBHOOK_TIMEOUT_MS ?? 2000,
      ...allowPrivateWebhooks(vars, host),
      signingKey: webhookSigningKey(vars, dataDir, url !== undefined),
    },
    // A production start (PostgreSQL, or NODE_ENV=production) never runs a development chain unless asked to.
    localChain: vars.LOCAL_CHAIN ?? (url === undefined && nodeEnv !== "production" ? "auto" : "off"),
    ...(vars.METRICS_TOKEN === undefined ? {} : { metricsToken: new Secret(vars.METRICS_TOKEN) }),
    ...(vars.DASHBOARD === "off" ? {} : { dashboardFolder: DEFAULT_DASHBOARD_FOLDER }),
    shutdownTimeoutMs: vars.SHUTDOWN_TIMEOUT_MS ?? 10_000,
    prettyLogs: stdoutIsTty && nodeEnv !== "production",
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The variables the service reads, checked against their schema. An empty value counts as unset; a value with a
 * problem is reported and then left out, so that the checks after this one see only good values (and defaults).
 */
function checkedEnvironment(env: NodeJS.ProcessEnv, problems: string[]): Environment {
  const given: Record<string, string | number> = {};
  for (const name of ENVIRONMENT_VARIABLES) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const wholeNumber = (EnvironmentSchema.properties[name] as { type?: unknown }).type === "integer";
    given[name] = wholeNumber && /^\d+$/.test(raw) ? Number(raw) : raw;
  }
  for (const problem of schemaProblems(EnvironmentSchema, given)) {
    const name = problem.path[0] as keyof Environment;
    // A key or a token is never repeated in a message, whatever is wrong with it.
    const shown = isSecret(EnvironmentSchema.properties[name]) ? "" : `, got "${env[name]}"`;
    problems.push(`${name} ${problem.predicate}${shown}`);
    delete given[name];
  }
  return given as Environment;
}

function httpLimits(vars: Environment, problems: string[]): HttpLimits {
  const d = DEFAULT_HTTP_LIMITS;
  const limits = {
    headersTimeoutMs: vars.HTTP_HEADERS_TIMEOUT_MS ?? d.headersTimeoutMs,
    requestTimeoutMs: vars.HTTP_REQUEST_TIMEOUT_MS ?? d.requestTimeoutMs,
    keepAliveTimeoutMs: vars.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? d.keepAliveTimeoutMs,
    maxConnections: vars.HTTP_MAX_CONNECTIONS ?? d.maxConnections,
  };
  // Node refuses a headers timeout longer than the request's, which covers the headers too.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    problems.push(
      `HTTP_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`,
    );
  }
  return limits;
}

/** `false` (default), `true`, a number of proxy hops, or a comma-separated list of proxy addresses and CIDR ranges. */
function trustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  if (raw === undefined || raw === "false") return false;
  if (raw === "true") return true;
  if (/^\d{1,2}$/.test(raw)) return Number(raw);
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split("/");
    const family = isIP(address ?? "");
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || rest.length > 0) {
      problems.push(`TRUST_PROXY must be ${TRUST_PROXY_FORMS}, got "${entry}"`);
      return false;
    }
  }
  return entries;
}

const LOOPBACK_HOST = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

/** Private webhook addresses are a development convenience: on by default only for a loopback bind outside production. */
function allowPrivateWebhooks(vars: Environment, host: string) {
  const decided = (allowPrivate: boolean, allowPrivateReason: string) => ({ allowPrivate, allowPrivateReason });
  const explicit = vars.WEBHOOK_ALLOW_PRIVATE;
  if (explicit !== undefined) return decided(explicit === "true", `WEBHOOK_ALLOW_PRIVATE=${explicit}`);
  const change = "set WEBHOOK_ALLOW_PRIVATE=true to allow them";
  if (vars.NODE_ENV === "production") return decided(false, `NODE_ENV is production (${change})`);
  if (!LOOPBACK_HOST.test(host)) return decided(false, `HOST ${host} is not a loopback address (${change})`);
  return decided(
    true,
    `HOST ${host} is loopback and NODE_ENV is not production (WEBHOOK_ALLOW_PRIVATE=false refuses them)`,
  );
}

function webhookSigningKey(vars: Environment, dataDir: string, sharedDatabase: boolean): WebhookSigningKeySource {
  if (vars.WEBHOOK_SIGNING_KEY !== undefined) return { kind: "env", key: new Secret(vars.WEBHOOK_SIGNING_KEY) };
  if (vars.WEBHOOK_SIGNING_KEY_FILE !== undefined) {
    return { kind: "file", path: path.resolve(vars.WEBHOOK_SIGNING_KEY_FILE), createIfMissing: false };
  }
  // Instances that share a PostgreSQL must give every account the same secret, so one of them cannot make it up.
  return { kind: "file", path: path.join(dataDir, "webhook.key"), createIfMissing: !sharedDatabase };
}

function signerKey(vars: Environment, dataDir: string, sharedDatabase: boolean, problems: string[]): SignerKeySource {
  const pkcs11 = pkcs11Signer(vars, problems);
  if (pkcs11) return pkcs11;
  if (vars.SIGNER_PRIVATE_KEY !== undefined) return { kind: "env", privateKey: new Secret(vars.SIGNER_PRIVATE_KEY) };
  if (vars.SIGNER_KEY_FILE !== undefined) {
    return { kind: "file", path: path.resolve(vars.SIGNER_KEY_FILE), createIfMissing: false };
  }
  // Instances that share a PostgreSQL must sign with one key, so a key made up by one of them is no default there.
  return { kind: "file", path: path.join(dataDir, "signer.key"), createIfMissing: !sharedDatabase };
}

/**
 * The PKCS#11 signer when any SIGNER_PKCS11_* setting is given: then all four are required, and a key from the
 * environment or a file is refused (two keys would leave it unclear which one the paymasters accept).
 */
function pkcs11Signer(vars: Environment, problems: string[]): Pkcs11SignerConfig | undefined {
  const given = PKCS11_SETTINGS.filter((name) => vars[name] !== undefined);
  if (given.length === 0) {
    if (vars.SIGNER_PKCS11_SESSIONS !== undefined) {
      problems.push("SIGNER_PKCS11_SESSIONS applies to a PKCS#11 signer only: set SIGNER_PKCS11_MODULE and the others");
    }
    return undefined;
  }
  const missing = PKCS11_SETTINGS.filter((name) => vars[name] === undefined);
  if (missing.length > 0) {
    problems.push(`${missing.join(", ")} must be set too: a PKCS#11 signer needs all of ${PKCS11_SETTINGS.join(", ")}`);
  }
  const keys = (["SIGNER_PRIVATE_KEY", "SIGNER_KEY_FILE"] as const).filter((name) => vars[name] !== undefined);
  if (keys.length > 0) {
    problems.push(
      `${keys.join(" and ")} cannot be used with SIGNER_PKCS11_MODULE: the signer key is either in a token or not`,
    );
  }
  return {
    kind: "pkcs11",
    module: vars.SIGNER_PKCS11_MODULE ?? "",
    tokenLabel: vars.SIGNER_PKCS11_TOKEN_LABEL ?? "",
    keyLabel: vars.SIGNER_PKCS11_KEY_LABEL ?? "",
    pinFile: path.resolve(vars.SIGNER_PKCS11_PIN_FILE ?? ""),
    sessions: vars.SIGNER_PKCS11_SESSIONS ?? DEFAULT_PKCS11_SESSIONS,
  };
}

function databaseUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    // The URL may hold a password: the message does not repeat it.
    problems.push("DATABASE_URL is not a valid URL");
    return undefined;
  }
  if (protocol !== "postgres:" && protocol !== "postgresql:") {
    problems.push("DATABASE_URL must start with postgres:// or postgresql://");
    return undefined;
  }
  return raw;
}

/** The chains file alone, checked the same way (every problem in one ConfigError). */
export function readChains(file: string): ReadonlyMap<number, ChainConfig> {
  const problems: string[] = [];
  const chains = readChainsFile(file, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return chains;
}

function readChainsFile(file: string, problems: string[]): ReadonlyMap<number, ChainConfig> {
  const chains = new Map<number, ChainConfig>();
  const place = `chains file ${file}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    problems.push(`${place} cannot be read as JSON: ${(error as Error).message}`);
    return chains;
  }
  const entriesWithProblems = new Set<string>();
  for (const problem of schemaProblems(ChainsFileSchema, parsed)) {
    if (problem.path[0] !== undefined) entriesWithProblems.add(problem.path[0]);
    problems.push(problemAt(parsed, problem, place, "entry"));
  }
  if (!Array.isArray(parsed)) return chains;
  const listed = new Set<unknown>();
  parsed.forEach((entry: unknown, index) => {
    const chainId = (entry as { chainId?: unknown } | null)?.chainId;
    if (typeof chainId === "number" && listed.has(chainId)) problems.push(`${place} lists chainId ${chainId} twice`);
    listed.add(chainId);
    // An entry the schema refused is not read further: its problems are reported, and the service will not start.
    if (entriesWithProblems.has(String(index))) return;
    const chain = chainConfig(entry as ChainEntry, `${place}, entry ${index}`, problems);
    if (!chains.has(chain.chainId)) chains.set(chain.chainId, chain);
  });
  return chains;
}

/** The local chain's token paymaster has a deterministic default address (src/chain/sponsoringChains.ts). */
const CHAIN_WITH_DEFAULT_TOKEN_PAYMASTER = 31337;
const MAX_UINT256 = (1n << 256n) - 1n;
const ZERO_ADDRESS = /^0x0{40}$/;

/** A chain entry the schema accepted, with the checks that need more than one field, as the service uses it. */
function chainConfig(entry: ChainEntry, where: string, problems: string[]): ChainConfig {
  const { tokens, entryPoints, nativeUsdPrice, l1DataFee, ...fields } = entry;
  const chain: ChainConfig = { ...fields };
  const l1 = l1DataFeeConfig(l1DataFee, chain, `${where}, l1DataFee`, problems);
  if (l1) chain.l1DataFee = l1;
  if (nativeUsdPrice !== undefined) {
    const price = nativeUsdPriceConfig(nativeUsdPrice, `${where}, nativeUsdPrice`, problems, chain.rpcUrl);
    if (price) chain.nativeUsdPrice = price;
  }
  if (tokens !== undefined) {
    if (tokens.length > 0 && !chain.tokenPaymaster && chain.chainId !== CHAIN_WITH_DEFAULT_TOKEN_PAYMASTER) {
      problems.push(`${where}: tokens need the chain's tokenPaymaster address`);
    }
    chain.tokens = tokenConfigs(tokens, where, problems);
  }
  if (entryPoints !== undefined) {
    chain.entryPoints = {};
    for (const version of LATER_ENTRY_POINT_VERSIONS) {
      const contracts = entryPoints[version];
      if (contracts === undefined) continue;
      chain.entryPoints[version] = Object.fromEntries(
        Object.entries(contracts).map(([field, address]) => [field, address.toLowerCase()]),
      );
    }
  }
  return chain;
}

/**
 * The chain's L1 data fee model: as the chains file says, else as the chain id implies. A rollup whose model the
 * service cannot compute is refused unless its bundler estimates (its figures carry the fee) or the file says "none".
 */
function l1DataFeeConfig(
  entry: L1DataFeeEntry | undefined,
  chain: ChainConfig,
  label: string,
  problems: string[],
): L1DataFeeConfig | undefined {
  if (entry === undefined) {
    const implied = impliedL1DataFeeModel(chain.chainId);
    if (implied.model === "none") return { model: "none", source: "chain id" };
    if (implied.model === "unsupported") {
      if (chain.bundlerUrl) return { model: "bundler", network: implied.network, source: "chain id" };
      problems.push(
        `${label}: chain ${chain.chainId} (${implied.network}) charges an L1 data fee by a model the service cannot ` +
          'compute: set the chain\'s bundlerUrl, whose estimates carry the fee, or say "l1DataFee": "none" if the ' +
          "chain charges none",
      );
      return undefined;
    }
    return computedModel(implied.model, undefined, undefined, "chain id");
  }
  const { model, oracle, marginPercent } = typeof entry === "string" ? { model: entry } : entry;
  if (model === "none") {
    if (oracle !== undefined || marginPercent !== undefined) {
      problems.push(`${label}: oracle and marginPercent apply to "op-stack" and "arbitrum" only`);
    }
    return { model: "none", source: "chains file" };
  }
  if (oracle !== undefined && ZERO_ADDRESS.test(oracle.toLowerCase())) {
    problems.push(`${label}.oracle must be a non-zero 20-byte hex address`);
  }
  return computedModel(model, oracle, marginPercent, "chains file");
}

function computedModel(
  model: "op-stack" | "arbitrum",
  oracle: string | undefined,
  marginPercent: number | undefined,
  source: L1DataFeeSource,
): L1DataFeeConfig {
  const defaultOracle = model === "op-stack" ? OP_STACK_GAS_PRICE_ORACLE : ARBITRUM_NODE_INTERFACE;
  return {
    model,
    oracle: (oracle ?? defaultOracle).toLowerCase(),
    marginPercent: marginPercent ?? DEFAULT_L1_MARGIN_PERCENT[model],
    source,
  };
}

function nativeUsdPriceConfig(
  price: NativeUsdPriceEntry,
  label: string,
  problems: string[],
  rpcUrl: string | undefined,
): NativeUsdPriceConfig | undefined {
  const { fixed, aggregator, maxAgeSeconds } = price;
  if ((fixed === undefined) === (aggregator === undefined)) {
    problems.push(`${label} must be ${NATIVE_USD_PRICE_FORMS} (exactly one of fixed and aggregator)`);
    return undefined;
  }
  if (fixed !== undefined) {
    if (!/[1-9]/.test(fixed)) problems.push(`${label}.fixed must be a positive number of dollars, not ${fixed}`);
    if (maxAgeSeconds !== undefined) problems.push(`${label}.maxAgeSeconds applies to an aggregator only`);
    return { fixed };
  }
  const feed = (aggregator as string).toLowerCase();
  if (ZERO_ADDRESS.test(feed)) problems.push(`${label}.aggregator must be a non-zero 20-byte hex address`);
  if (maxAgeSeconds === undefined) {
    problems.push(`${label}.maxAgeSeconds is required with an aggregator: how old an answer may be, in seconds`);
  }
  if (rpcUrl === undefined) problems.push(`${label}.aggregator needs the chain's rpcUrl to be read`);
  return { aggregator: feed, maxAgeSeconds: maxAgeSeconds ?? 1 };
}

function tokenConfigs(tokens: TokenEntry[], where: string, problems: string[]): TokenConfig[] {
  const seen = new Set<string>();
  return tokens.map((token, index) => {
    const address = token.address.toLowerCase();
    if (ZERO_ADDRESS.test(address)) {
      problems.push(`${where}, tokens[${index}]: address must be a non-zero 20-byte hex address`);
    }
    if (seen.has(address)) problems.push(`${where}: token ${address} is listed twice`);
    seen.add(address);
    const config: TokenConfig = {
      address,
      symbol: token.symbol,
      decimals: token.decimals,
      price: tokenPrice(token.price, `${where}, tokens[${index}] (${token.address})`, problems),
      markup: token.markup ?? DEFAULT_TOKEN_MARKUP,
    };
    if (token.logoUrl !== undefined) config.logoUrl = token.logoUrl;
    if (token.usdPrice !== undefined) config.usdPrice = token.usdPrice;
    if (token.permit === true) config.permit = true;
    return config;
  });
}

function tokenPrice(price: TokenEntry["price"], label: string, problems: string[]): TokenPriceConfig {
  const { fixedRate, aggregator, maxAgeSeconds } = price;
  if ((fixedRate === undefined) === (aggregator === undefined)) {
    problems.push(`${label}: price must be ${PRICE_FORMS} (exactly one of the two)`);
    return { fixedRate: 1n };
  }
  if (fixedRate !== undefined) {
    const rate = BigInt(fixedRate);
    if (rate <= 0n || rate > MAX_UINT256) {
      problems.push(
        `${label}: price.fixedRate must be a positive whole number of token base units per 1e18 wei, as a decimal string`,
      );
    }
    if (maxAgeSeconds !== undefined) problems.push(`${label}: price.maxAgeSeconds applies to an aggregator only`);
    return { fixedRate: rate };
  }
  const feed = (aggregator as string).toLowerCase();
  if (ZERO_ADDRESS.test(feed)) problems.push(`${label}: price.aggregator must be a non-zero 20-byte hex address`);
  return maxAgeSeconds === undefined ? { aggregator: feed } : { aggregator: feed, maxAgeSeconds };
}
