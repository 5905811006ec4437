// Benchmark: sponsorship requests over real HTTP, against an empty Fastify handler measured in the same run. Both
// servers run in child processes; this process generates the load. Every request has a new nonce, as a wallet's do.
//   npm run bench                          whitelist rule, then COUNT + NATIVE_ASSET limits too, on PGlite
//   npm run bench -- --postgres            the same on the PostgreSQL of DATABASE_URL (default: the local test one)
//   options: --seconds N (default 10), --connections N (default 50)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { encodeFunctionData, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createAccount } from "../src/storage/accounts";
import { type Database, openDatabase } from "../src/storage/database";
import { pgliteFolder } from "../src/storage/dataFolder";
import { migrate } from "../src/storage/migrations";
import { embeddedEnv, startService } from "../test/helpers/service";
import { type LoadResult, load } from "./load";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "50" },
    postgres: { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ROOT = path.resolve(import.meta.dirname, "..");
const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const accountAbi = parseAbi(["function execute_ncC(address dest, uint256 value, bytes func)"]);
const callData = encodeFunctionData({
  abi: accountAbi,
  functionName: "execute_ncC",
  args: [TARGET, 0n, encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [1n] })],
});

/** The n-th request: one of 1,000 senders, each with its own growing nonce. */
const rpcBody = (n: number) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: n,
    method: "pm_sponsorUserOperation",
    params: [
      {
        sender: `0x${(1 + (n % 1000)).toString(16).padStart(40, "0")}`,
        nonce: `0x${Math.floor(n / 1000).toString(16)}`,
        initCode: "0x",
        callData,
        callGasLimit: "0x1a930",
        verificationGasLimit: "0xdf21",
        preVerificationGas: "0x1267c",
        maxFeePerGas: "0xc02244",
        maxPriorityFeePerGas: "0xf4240",
        signature: "0x",
      },
      { mode: "SPONSORED", calculateGasLimits: false, expiryDuration: 300 },
    ],
  });

let offset = 0;
/** Warm-up first (JIT, pools, caches); each run continues the nonces, so no request repeats an earlier one. */
async function measure(url: string): Promise<LoadResult> {
  const body = (n: number) => rpcBody(offset + n);
  await load(url, body, { connections, seconds: 2 });
  offset += 10_000_000;
  const result = await load(url, (n) => rpcBody(offset + n), { connections, seconds });
  offset += 10_000_000;
  return result;
}

async function baseline(): Promise<LoadResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/emptyServer.ts"], { cwd: ROOT, stdio: "pipe" });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      const match = /PORT (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`empty server exited with ${code}`)));
  });
  try {
    return await measure(`http://127.0.0.1:${port}/api/v1/31337/key`);
  } finally {
    child.kill("SIGTERM");
  }
}

async function api(base: string, method: string, route: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${base}/api/v2/public/sdk/${route}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data?: Record<string, string> };
  if (!response.ok) throw new Error(`${method} ${route}: ${JSON.stringify(json)}`);
  return json.data ?? {};
}

/** A dApp with a funding wallet and a whitelisted method; returns its RPC URL and management headers. */
async function setUpDapp(base: string, authToken: string) {
  const dapp = await api(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    {
      name: "bench",
      type: "HYBRID",
      chainId: 31337,
      version: "1.0.0",
    },
  );
  const headers = { authToken, apiKey: dapp.apiKey as string };
  const { fundingMessage } = await api(base, "GET", `funding-message/${dapp.paymasterId}`, headers);
  const wallet = privateKeyToAccount(generatePrivateKey());
  await api(base, "PATCH", "paymasterParameters", headers, {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await wallet.signMessage({ message: fundingMessage as string }),
    address: wallet.address,
  });
  await api(base, "POST", "smart-contract", headers, {
    name: "target",
    address: TARGET,
    abi: JSON.stringify(targetAbi),
    whitelistedMethods: ["mint"],
  });
  return { url: `${base}/api/v1/31337/${dapp.apiKey}`, headers };
}

/** Limits far above what a run can use: the ledger does all its work and never refuses. */
async function addLimits(base: string, headers: Record<string, string>) {
  for (const [name, thresholdType, threshold] of [
    ["count", "COUNT", 1e12],
    ["spend", "NATIVE_ASSET", 1e9],
  ] as const) {
    await api(base, "POST", "paymaster-policy", headers, {
      name,
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold, thresholdType },
    });
  }
}

async function checkSponsored(url: string) {
  const reply = await fetch(url, {
    method: "POST",
    body: rpcBody(-1 >>> 0),
    headers: { "content-type": "application/json" },
  });
  const json = (await reply.json()) as { result?: { paymasterAndData: string } };
  if (json.result?.paymasterAndData.length !== 2 + 276 * 2) throw new Error(`not sponsored: ${JSON.stringify(json)}`);
}

interface Storage {
  env: NodeJS.ProcessEnv;
  authToken?: string;
  /** Opens the database once the service has stopped, to count what was recorded. */
  open(): Promise<Database>;
  cleanUp(): Promise<void>;
}

async function embeddedStorage(): Promise<Storage> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-"));
  return {
    env: embeddedEnv(dataDir),
    open: () => openDatabase({ dataDir: pgliteFolder(dataDir) }),
    cleanUp: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

async function postgresStorage(): Promise<Storage> {
  const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const name = `paymaster_bench_${process.pid}_${Date.now()}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = await openDatabase({ url: target.toString() });
  await migrate(db);
  const { authToken } = await createAccount(db, "bench");
  await db.close();
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-"));
  return {
    env: {
      ...process.env,
      DATABASE_URL: target.toString(),
      SIGNER_PRIVATE_KEY: generatePrivateKey(),
      // Instances sharing a database must be given the same webhook signing key too.
      WEBHOOK_SIGNING_KEY: generatePrivateKey(),
      DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "info",
    },
    authToken,
    open: () => openDatabase({ url: target.toString() }),
    cleanUp: async () => {
      await admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One service run: whitelist only, then with the two limits added; counts what was recorded afterwards. */
async function service(storage: Storage) {
  // Request logs would cost the service more than some of the work measured; the start line is all we read.
  const running = await startService({ ...storage.env, LOG_LEVEL: storage.env.DATABASE_URL ? "info" : "warn" });
  const results: Record<string, LoadResult> = {};
  try {
    const authToken = storage.authToken ?? (running.output().trim().split("\n").at(-1) as string);
    const { url, headers } = await setUpDapp(running.baseUrl, authToken);
    await checkSponsored(url);
    results.whitelist = await measure(url);
    await addLimits(running.baseUrl, headers);
    await checkSponsored(url);
    results.limits = await measure(url);
  } finally {
    await running.stop();
  }
  const db = await storage.open();
  const [row] = await db.query<{ count: string | number }>(
    "SELECT count(*) AS count FROM sponsorships WHERE sponsored",
  );
  await db.close();
  await storage.cleanUp();
  return { results, recorded: Number(row?.count ?? 0) };
}

const empty = await baseline();
const storage = values.postgres ? await postgresStorage() : await embeddedStorage();
const database = values.postgres ? "PostgreSQL" : "PGlite";
const { results, recorded } = await service(storage);
const rows: Record<string, LoadResult & { ratio?: number }> = { "empty Fastify handler": empty };
for (const [name, result] of Object.entries(results)) {
  rows[`sponsor, ${database}, ${name === "whitelist" ? "whitelist rule" : "whitelist + COUNT + NATIVE_ASSET limits"}`] =
    { ...result, ratio: Math.round((result.requestsPerSecond / empty.requestsPerSecond) * 100) / 100 };
}
console.table(rows);
const answered = Object.values(results).reduce((sum, r) => sum + r.non2xx, 0);
console.log(
  `non-2xx answers: ${answered}; sponsorships recorded: ${recorded} (every answer of the runs, warm-ups included)`,
);
console.log("targets: ratio ≥ 0.50 of the empty handler, p99 < 25 ms at 50 connections");
