import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";
import { Settings } from "typebox/system";
import { ConfigError, loadConfig } from "../src/config";

const dir = mkdtempSync(path.join(tmpdir(), "paymaster-config-"));
function chainsFile(content: string): string {
  const file = path.join(dir, `chains-${Math.random()}.json`);
  writeFileSync(file, content);
  return file;
}

test("defaults: loopback, port 3000, ./data, the local chain and public test networks", () => {
  const config = loadConfig({});
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.port, 3000);
  assert.equal(config.dataDir, path.resolve("data"));
  assert.equal(config.databaseUrl, undefined);
  assert.equal(config.logLevel, "info");
  assert.ok(config.chains.has(31337));
  assert.ok(config.chains.has(11155111));
});

test("environment variables are read and checked", () => {
  const config = loadConfig({ PORT: "8080", HOST: "0.0.0.0", DATA_DIR: "/tmp/x", LOG_LEVEL: "debug" });
  assert.deepEqual([config.port, config.host, config.dataDir, config.logLevel], [8080, "0.0.0.0", "/tmp/x", "debug"]);
  assert.equal(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).databaseUrl, "postgres://u@h/db");
});

test("the signer key: from the environment as a secret, else a key file made only on the embedded default", () => {
  const key = `0x${"ab".repeat(32)}`;
  const fromEnv = loadConfig({ SIGNER_PRIVATE_KEY: key }).signerKey;
  assert.equal(fromEnv.kind, "env");
  assert.doesNotMatch(JSON.stringify(fromEnv) + String(fromEnv) + inspect(fromEnv), /abab/, "prints as [secret]");
  assert.deepEqual(loadConfig({ DATA_DIR: "/tmp/k" }).signerKey, {
    kind: "file",
    path: "/tmp/k/signer.key",
    createIfMissing: true,
  });
  const shared = loadConfig({ DATA_DIR: "/tmp/k", DATABASE_URL: "postgres://u@h/db" }).signerKey;
  assert.deepEqual(shared, { kind: "file", path: "/tmp/k/signer.key", createIfMissing: false });
  assert.throws(
    () => loadConfig({ SIGNER_PRIVATE_KEY: "0x1234" }),
    /SIGNER_PRIVATE_KEY must be 0x followed by 64 hex digits/,
  );
});

test("the PKCS#11 signer: all four settings together, the sessions defaulted, and no key file beside it", () => {
  const pkcs11 = {
    SIGNER_PKCS11_MODULE: "/usr/lib/softhsm/libsofthsm2.so",
    SIGNER_PKCS11_TOKEN_LABEL: "paymaster",
    SIGNER_PKCS11_KEY_LABEL: "verifying-signer",
    SIGNER_PKCS11_PIN_FILE: "/run/secrets/hsm.pin",
  };
  const expected = {
    kind: "pkcs11",
    module: "/usr/lib/softhsm/libsofthsm2.so",
    tokenLabel: "paymaster",
    keyLabel: "verifying-signer",
    pinFile: "/run/secrets/hsm.pin",
    sessions: 4,
  };
  // On the embedded default too: with a token configured, no signer.key is made in the data folder.
  assert.deepEqual(loadConfig({ DATA_DIR: "/tmp/k", ...pkcs11 }).signerKey, expected);
  assert.deepEqual(loadConfig({ ...pkcs11, SIGNER_PKCS11_SESSIONS: "16" }).signerKey, { ...expected, sessions: 16 });
  assert.throws(
    () => loadConfig({ SIGNER_PKCS11_MODULE: pkcs11.SIGNER_PKCS11_MODULE, SIGNER_PKCS11_KEY_LABEL: "k" }),
    /SIGNER_PKCS11_TOKEN_LABEL, SIGNER_PKCS11_PIN_FILE must be set too: a PKCS#11 signer needs all of SIGNER_PKCS11_MODULE, /,
  );
  assert.throws(
    () => loadConfig({ ...pkcs11, SIGNER_KEY_FILE: "/run/secrets/signer.key" }),
    /SIGNER_KEY_FILE cannot be used with SIGNER_PKCS11_MODULE/,
  );
  assert.throws(
    () => loadConfig({ SIGNER_PKCS11_SESSIONS: "4" }),
    /SIGNER_PKCS11_SESSIONS applies to a PKCS#11 signer only/,
  );
  assert.throws(
    () => loadConfig({ ...pkcs11, SIGNER_PKCS11_SESSIONS: "0" }),
    /SIGNER_PKCS11_SESSIONS must be a whole number from 1 to 256/,
  );
});

for (const [env, message] of [
  [{ PORT: "70000" }, /PORT must be a whole number from 0 to 65535/],
  [{ PORT: "-1" }, /PORT must be a whole number/],
  [{ LOG_LEVEL: "loud" }, /LOG_LEVEL must be one of/],
  [{ DATABASE_URL: "not a url" }, /DATABASE_URL is not a valid URL/],
  [{ BODY_LIMIT_BYTES: "10" }, /BODY_LIMIT_BYTES must be a whole number from 1024/],
  [{ CHAINS_FILE: "/nonexistent/chains.json" }, /cannot be read as JSON/],
  [{ CHAINS_FILE: chainsFile("[]") }, /non-empty JSON array/],
  [{ CHAINS_FILE: chainsFile('[{"chainId": "1", "name": "x"}]') }, /entry 0: chainId must be a positive integer/],
  [{ CHAINS_FILE: chainsFile('[{"chainId": 1}]') }, /entry 0: name must be a non-empty string/],
  [{ CHAINS_FILE: chainsFile('[{"chainId": 1, "name": "a"}, {"chainId": 1, "name": "b"}]') }, /lists chainId 1 twice/],
  [{ CHAINS_FILE: chainsFile('[{"chainId": 1, "name": "a", "rpcUrl": "ws://x"}]') }, /rpcUrl must be an http/],
  [{ CHAINS_FILE: chainsFile('[{"chainId": 1, "name": "a", "entryPoint": "0x12"}]') }, /entryPoint must be a 20-byte/],
] as const) {
  test(`refuses ${JSON.stringify(env).slice(0, 70)}`, () => {
    assert.throws(
      () => loadConfig(env),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  });
}

test("a chains file replaces the default list", () => {
  const file = chainsFile('[{"chainId": 137, "name": "Polygon", "rpcUrl": "https://rpc.example"}]');
  const config = loadConfig({ CHAINS_FILE: file });
  assert.deepEqual([...config.chains.keys()], [137]);
  assert.equal(config.chains.get(137)?.rpcUrl, "https://rpc.example");
});

test("HTTP limits: defaults, values from the environment, and refusals", () => {
  assert.deepEqual(loadConfig({}).http, {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 72_000,
    maxConnections: 4096,
  });
  const set = loadConfig({
    HTTP_HEADERS_TIMEOUT_MS: "2000",
    HTTP_REQUEST_TIMEOUT_MS: "5000",
    HTTP_KEEP_ALIVE_TIMEOUT_MS: "65000",
    HTTP_MAX_CONNECTIONS: "500",
  }).http;
  assert.deepEqual(set, {
    headersTimeoutMs: 2000,
    requestTimeoutMs: 5000,
    keepAliveTimeoutMs: 65_000,
    maxConnections: 500,
  });
  assert.throws(() => loadConfig({ HTTP_MAX_CONNECTIONS: "0" }), /HTTP_MAX_CONNECTIONS must be a whole number/);
  assert.throws(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: "10s" }), /HTTP_HEADERS_TIMEOUT_MS must be/);
  assert.throws(
    () => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: "40000" }),
    /HTTP_HEADERS_TIMEOUT_MS \(40000\) must not exceed HTTP_REQUEST_TIMEOUT_MS \(30000\)/,
  );
});

test("the wrong-credential throttle and the trusted proxy", () => {
  assert.deepEqual(loadConfig({}).failureThrottle, { maxFailures: 30, windowMs: 60_000 });
  assert.deepEqual(loadConfig({ AUTH_FAILURE_LIMIT: "0", AUTH_FAILURE_WINDOW_SECONDS: "300" }).failureThrottle, {
    maxFailures: 0,
    windowMs: 300_000,
  });
  assert.throws(() => loadConfig({ AUTH_FAILURE_WINDOW_SECONDS: "0" }), /AUTH_FAILURE_WINDOW_SECONDS must be/);
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ TRUST_PROXY: "true" }).trustProxy, true);
  assert.equal(loadConfig({ TRUST_PROXY: "2" }).trustProxy, 2);
  assert.deepEqual(loadConfig({ TRUST_PROXY: "10.0.0.0/8, 127.0.0.1,::1" }).trustProxy, [
    "10.0.0.0/8",
    "127.0.0.1",
    "::1",
  ]);
  assert.throws(() => loadConfig({ TRUST_PROXY: "proxy.internal" }), /TRUST_PROXY must be .*got "proxy.internal"/);
  assert.throws(() => loadConfig({ TRUST_PROXY: "10.0.0.0/33" }), /TRUST_PROXY must be/);
});

/** The ConfigError loadConfig throws, or a failed assertion when it does not throw one. */
function configError(env: NodeJS.ProcessEnv): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `a ConfigError, not ${String(error)}`);
    return error;
  }
  assert.fail("loadConfig accepted the configuration");
}

test("every problem is reported at once: several variables and the chains file in one ConfigError", () => {
  const secret = "0xnot-a-key-but-private";
  const error = configError({
    PORT: "eighty",
    LOG_LEVEL: "loud",
    SIGNER_PRIVATE_KEY: secret,
    DATABASE_URL: "mysql://u@h/db",
    TRUST_PROXY: "proxy.internal",
    HTTP_MAX_CONNECTIONS: "0",
    CHAINS_FILE: chainsFile('[{"chainId": 0, "name": "a"}, {"chainId": 5, "name": "b", "rpcUrl": "ws://x"}]'),
  });
  assert.deepEqual(error.problems.slice(0, 6), [
    'PORT must be a whole number from 0 to 65535, got "eighty"',
    'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    'HTTP_MAX_CONNECTIONS must be a whole number from 1 to 1000000, got "0"',
    "SIGNER_PRIVATE_KEY must be 0x followed by 64 hex digits",
    "DATABASE_URL must start with postgres:// or postgresql://",
    'TRUST_PROXY must be true, false, a number of hops or a comma-separated list of IP addresses and CIDR ranges, got "proxy.internal"',
  ]);
  assert.equal(error.problems.length, 8);
  assert.match(error.problems[6] as string, /entry 0: chainId must be a positive integer$/);
  assert.match(error.problems[7] as string, /entry 1: rpcUrl must be an http\(s\) URL$/);
  // One message lists them all, one a line, and never repeats a secret.
  assert.match(error.message, /^8 configuration problems:\n {2}- PORT must be/);
  assert.equal(error.message.split("\n").length, 9);
  assert.doesNotMatch(error.message, /not-a-key/);
});

test("one problem alone is the message itself", () => {
  const error = configError({ PORT: "70000" });
  assert.deepEqual(error.problems, ['PORT must be a whole number from 0 to 65535, got "70000"']);
  assert.equal(error.message, error.problems[0]);
});

test("unknown fields of a chain entry are refused, so that a misspelt one does not leave a default in place", () => {
  const error = configError({ CHAINS_FILE: chainsFile('[{"chainId": 1, "name": "a", "rpcURL": "https://x"}]') });
  assert.match(error.message, /entry 0 has unknown field rpcURL \(known: chainId, name, rpcUrl, /);
});

const V07_PAYMASTER = "0x8aD159a275AEE56fb2334DBb69036E9c7baCEe9b";
const V08_ENTRY_POINT = "0x4337084D9E255Ff0702461CF8895CE9E3b5Ff108";

test("entryPoints: the contracts of v0.7 and v0.8 per chain, addresses lowercase, v0.6 kept on the chain's own fields", () => {
  const file = chainsFile(
    JSON.stringify([
      {
        chainId: 84532,
        name: "Base Sepolia",
        verifyingPaymaster: V07_PAYMASTER,
        entryPoints: {
          "0.7": { verifyingPaymaster: V07_PAYMASTER, tokenPaymaster: V07_PAYMASTER },
          "0.8": { entryPoint: V08_ENTRY_POINT },
        },
      },
      { chainId: 1, name: "no later versions" },
    ]),
  );
  const chains = loadConfig({ CHAINS_FILE: file }).chains;
  const chain = chains.get(84532);
  assert.equal(chain?.verifyingPaymaster, V07_PAYMASTER, "the v0.6 field as given");
  assert.deepEqual(chain?.entryPoints, {
    "0.7": { verifyingPaymaster: V07_PAYMASTER.toLowerCase(), tokenPaymaster: V07_PAYMASTER.toLowerCase() },
    "0.8": { entryPoint: V08_ENTRY_POINT.toLowerCase() },
  });
  assert.equal(chains.get(1)?.entryPoints, undefined);
  const empty = loadConfig({ CHAINS_FILE: chainsFile('[{"chainId": 1, "name": "a", "entryPoints": {}}]') });
  assert.deepEqual(empty.chains.get(1)?.entryPoints, {});
});

for (const [name, entryPoints, message] of [
  ["an unknown version", { "0.6": {} }, /entry 0: entryPoints has unknown field 0\.6 \(known: 0\.7, 0\.8, 0\.9\)/],
  [
    "not an object",
    ["0.7"],
    /entry 0: entryPoints must be an object keyed by EntryPoint version \(0\.7, 0\.8, 0\.9; v0\.6/,
  ],
  [
    "a bad address",
    { "0.7": { verifyingPaymaster: "0x1234" } },
    /entry 0: entryPoints\["0\.7"\]\.verifyingPaymaster must be a 20-byte hex address/,
  ],
  [
    "an unknown field",
    { "0.8": { paymaster: V07_PAYMASTER } },
    /entry 0: entryPoints\["0\.8"\] has unknown field paymaster \(known: entryPoint, verifyingPaymaster, tokenPaymaster, permitTokenPaymaster\)/,
  ],
  [
    "a version that is not an object",
    { "0.7": V07_PAYMASTER },
    /entryPoints\["0\.7"\] must be an object with entryPoint, verifyingPaymaster, tokenPaymaster and permitTokenPaymaster addresses/,
  ],
] as const) {
  test(`entryPoints: refuses ${name}`, () => {
    const error = configError({ CHAINS_FILE: chainsFile(JSON.stringify([{ chainId: 1, name: "a", entryPoints }])) });
    assert.equal(error.problems.length, 1, error.message);
    assert.match(error.message, message);
  });
}

test("entryPoints: every problem of both versions at once", () => {
  const entryPoints = { "0.7": { entryPoint: "0x12", extra: 1 }, "0.8": { tokenPaymaster: 5 }, "1.0": {} };
  const error = configError({ CHAINS_FILE: chainsFile(JSON.stringify([{ chainId: 1, name: "a", entryPoints }])) });
  assert.equal(error.problems.length, 4, error.message);
  assert.match(error.message, /entryPoints has unknown field 1\.0/);
  assert.match(error.message, /entryPoints\["0\.7"\] has unknown field extra/);
  assert.match(error.message, /entryPoints\["0\.7"\]\.entryPoint must be a 20-byte hex address/);
  assert.match(error.message, /entryPoints\["0\.8"\]\.tokenPaymaster must be a 20-byte hex address/);
});

test("a long list is reported whole (more problems than a validator's usual cap of eight)", () => {
  const entries = Array.from({ length: 12 }, (_, index) => ({ chainId: index + 1, name: "" }));
  const usualCap = Settings.Get().maxErrors;
  const error = configError({ CHAINS_FILE: chainsFile(JSON.stringify(entries)) });
  assert.equal(error.problems.length, 12);
  assert.equal(Settings.Get().maxErrors, usualCap, "the cap other validations keep is set back");
  assert.match(error.problems[11] as string, /entry 11: name must be a non-empty string$/);
});

test("nativeUsdPrice: a fixed rate as written, or a feed with its maximum age (lowercased)", () => {
  const file = chainsFile(
    JSON.stringify([
      { chainId: 1, name: "a", nativeUsdPrice: { fixed: "1234.56" } },
      {
        chainId: 2,
        name: "b",
        rpcUrl: "https://rpc.example",
        nativeUsdPrice: { aggregator: `0x${"AB".repeat(20)}`, maxAgeSeconds: 3600 },
      },
      { chainId: 3, name: "c" },
    ]),
  );
  const chains = loadConfig({ CHAINS_FILE: file }).chains;
  assert.deepEqual(chains.get(1)?.nativeUsdPrice, { fixed: "1234.56" });
  assert.deepEqual(chains.get(2)?.nativeUsdPrice, { aggregator: `0x${"ab".repeat(20)}`, maxAgeSeconds: 3600 });
  assert.equal(chains.get(3)?.nativeUsdPrice, undefined);
});

const FEED = `0x${"12".repeat(20)}`;
for (const [name, price, message, rpcUrl] of [
  ["neither source", {}, /entry 0, nativeUsdPrice must be \{"fixed".*exactly one of fixed and aggregator/],
  ["both sources", { fixed: "1", aggregator: FEED, maxAgeSeconds: 60 }, /exactly one of fixed and aggregator/],
  ["a zero price", { fixed: "0.00" }, /nativeUsdPrice.fixed must be a positive number of dollars, not 0.00/],
  ["a number, not a text", { fixed: 1234.56 }, /nativeUsdPrice.fixed must be a positive decimal number of US dollars/],
  ["an exponent", { fixed: "1e3" }, /nativeUsdPrice.fixed must be a positive decimal number/],
  ["a negative price", { fixed: "-5" }, /nativeUsdPrice.fixed must be a positive decimal number/],
  [
    "maxAgeSeconds with a fixed price",
    { fixed: "5", maxAgeSeconds: 60 },
    /maxAgeSeconds applies to an aggregator only/,
  ],
  ["a feed without maxAgeSeconds", { aggregator: FEED }, /nativeUsdPrice.maxAgeSeconds is required with an aggregator/],
  ["a zero maxAgeSeconds", { aggregator: FEED, maxAgeSeconds: 0 }, /maxAgeSeconds must be a whole number of seconds/],
  ["a zero feed address", { aggregator: `0x${"0".repeat(40)}`, maxAgeSeconds: 60 }, /aggregator must be a non-zero/],
  ["a feed without an RPC", { aggregator: FEED, maxAgeSeconds: 60 }, /aggregator needs the chain's rpcUrl/, false],
  ["an unknown field", { fixed: "5", currency: "EUR" }, /nativeUsdPrice/],
] as const) {
  test(`refuses nativeUsdPrice: ${name}`, () => {
    const entry = {
      chainId: 1,
      name: "a",
      ...(rpcUrl === false ? {} : { rpcUrl: "https://rpc.example" }),
      nativeUsdPrice: price,
    };
    assert.throws(
      () => loadConfig({ CHAINS_FILE: chainsFile(JSON.stringify([entry])) }),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
      name,
    );
  });
}

test("l1DataFee: the chain id's model by default, the chains file's when it names one", () => {
  const config = loadConfig({
    CHAINS_FILE: chainsFile(
      JSON.stringify([
        { chainId: 8453, name: "Base" },
        { chainId: 42161, name: "Arbitrum One" },
        { chainId: 1, name: "Ethereum" },
        { chainId: 31337, name: "local" },
        { chainId: 777, name: "an OP chain we do not list", l1DataFee: "op-stack" },
        {
          chainId: 778,
          name: "an Arbitrum chain with its own figures",
          l1DataFee: { model: "arbitrum", oracle: "0x00000000000000000000000000000000000000C9", marginPercent: 50 },
        },
        { chainId: 10, name: "OP Mainnet told none", l1DataFee: "none" },
        { chainId: 534352, name: "Scroll", bundlerUrl: "https://bundler.example" },
      ]),
    ),
  });
  const model = (chainId: number) => config.chains.get(chainId)?.l1DataFee;
  assert.deepEqual(model(8453), {
    model: "op-stack",
    oracle: "0x420000000000000000000000000000000000000f",
    marginPercent: 25,
    source: "chain id",
  });
  assert.deepEqual(model(42161), {
    model: "arbitrum",
    oracle: "0x00000000000000000000000000000000000000c8",
    marginPercent: 20,
    source: "chain id",
  });
  assert.deepEqual(model(1), { model: "none", source: "chain id" });
  assert.deepEqual(model(31337), { model: "none", source: "chain id" });
  assert.equal(model(777)?.model, "op-stack");
  assert.equal(model(777)?.source, "chains file");
  assert.deepEqual(model(778), {
    model: "arbitrum",
    oracle: "0x00000000000000000000000000000000000000c9",
    marginPercent: 50,
    source: "chains file",
  });
  assert.deepEqual(model(10), { model: "none", source: "chains file" });
  assert.deepEqual(model(534352), { model: "bundler", network: "Scroll", source: "chain id" });
});

test("l1DataFee: a rollup whose model the service cannot compute is refused at start, naming the ways out", () => {
  const error = configError({ CHAINS_FILE: chainsFile('[{"chainId": 5000, "name": "Mantle"}]') });
  assert.match(
    error.message,
    /entry 0, l1DataFee: chain 5000 \(Mantle\) charges an L1 data fee by a model the service cannot compute: set the chain's bundlerUrl, whose estimates carry the fee, or say "l1DataFee": "none"/,
  );
  // Said explicitly, "none" is the operator's word for it.
  const none = loadConfig({
    CHAINS_FILE: chainsFile('[{"chainId": 534351, "name": "Scroll Sepolia", "l1DataFee": "none"}]'),
  });
  assert.deepEqual(none.chains.get(534351)?.l1DataFee, { model: "none", source: "chains file" });
});

test("l1DataFee: bad values name the field and what it must be", () => {
  const error = configError({
    CHAINS_FILE: chainsFile(
      JSON.stringify([
        { chainId: 1, name: "a", l1DataFee: "scroll" },
        { chainId: 2, name: "b", l1DataFee: { model: "op-stack", marginPercent: 500 } },
        { chainId: 3, name: "c", l1DataFee: { model: "none", oracle: "0x420000000000000000000000000000000000000F" } },
        { chainId: 4, name: "d", l1DataFee: { model: "op-stack", oracle: `0x${"0".repeat(40)}` } },
      ]),
    ),
  });
  assert.equal(error.problems.length, 4, error.message);
  assert.match(error.problems[0] as string, /entry 0: l1DataFee must be "none", "op-stack", "arbitrum", or \{"model"/);
  assert.match(error.problems[1] as string, /entry 1: l1DataFee/);
  assert.match(
    error.problems[2] as string,
    /entry 2, l1DataFee: oracle and marginPercent apply to "op-stack" and "arbitrum" only/,
  );
  assert.match(error.problems[3] as string, /entry 3, l1DataFee.oracle must be a non-zero 20-byte hex address/);
});
