// Benchmark: sponsorship requests over real HTTP, against an empty Fastify handler measured in the same run. Both
// servers run in child processes; this process generates the load. Every request has a new nonce, as a wallet's do.
//   npm run bench                          whitelist rule, then COUNT + NATIVE_ASSET limits too, on PGlite
//   npm run bench -- --postgres            the same on the PostgreSQL of DATABASE_URL (default: the local test one)
//   a third set-up is the second at scale: --contracts N whitelisted contracts (default 10,000), --senders N (100,000)
//   options: --seconds N (default 5), --connections N,N (default 50,10), --rounds N (default 3), --cpu-prof DIR,
//            --against DIR (another checkout, measured in the same rounds: an A/B under the same load),
//            --dist (run each checkout's built dist/main.js as production does, after `npm run build`, not tsx),
//            --set-ups whitelist,limited,large (default all three; one alone gives a profile of that set-up alone),
//            --instances 2 (PostgreSQL only: a second service on the same database; each set-up is then measured on one
//            instance and on both, the connections split between them, in the same rounds),
//            --entry-point 0.6|0.7|0.8 (the operations' EntryPoint version, default 0.6),
//            --node PATH (A/B of the runtime: this checkout also run by another Node executable, in the same rounds),
//            --pkcs11 (A/B of the signer: this checkout with its key file and with its key in a SoftHSM2 token made for
//            the run, in the same rounds; needs softhsm2 and opensc)
// Each figure is given over the rounds, beside the CPU time per answer of the service (and of PostgreSQL's backends),
// read from /proc: on a shared machine, requests/s varies by half between runs, CPU per request far less.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Address, encodeFunctionData, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../src/bindings/entryPoints/entryPointV07";
import type { BatchName } from "../src/metrics/metrics";
import { createAccount } from "../src/storage/accounts";
import { type Database, openDatabase } from "../src/storage/database";
import { pgliteFolder } from "../src/storage/dataFolder";
import { migrate } from "../src/storage/migrations";
import { embeddedEnv, type RunningService, startService } from "../test/helpers/service";
import { createSoftHsm } from "../test/helpers/softHsm";
import { cpuDuring, processCpuMicros } from "./cpu";
import { type LoadResult, load } from "./load";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    connections: { type: "string", default: "50,10" },
    rounds: { type: "string", default: "3" },
    /** The large set-up: this many whitelisted contracts (each its own ABI) and senders under the per-sender limit. */
    contracts: { type: "string", default: "10000" },
    senders: { type: "string", default: "100000" },
    postgres: { type: "boolean", default: false },
    /** A folder for a V8 CPU profile of the service, written when it stops (chrome://inspect or speedscope read it). */
    "cpu-prof": { type: "string" },
    /** Another checkout (say a worktree of the commit before a change): measured in the same rounds, turn about. */
    against: { type: "string" },
    /** Runs the built service (`node dist/main.js`, what `npm run start:production` and the image run), not tsx. */
    dist: { type: "boolean", default: false },
    /** Which set-ups to measure: a CPU profile of one set-up alone says what that set-up costs more than another. */
    "set-ups": { type: "string", default: "whitelist,limited,large" },
    /** Service processes on the same PostgreSQL database: with 2, each figure is measured on one and on both. */
    instances: { type: "string", default: "1" },
    /** The EntryPoint version of the operations sent: v0.6's form, or v0.7's (also v0.8's) with its address. */
    "entry-point": { type: "string", default: "0.6" },
    /** The signer in a PKCS#11 token (SoftHSM2) beside the key file, measured in the same rounds. */
    pkcs11: { type: "boolean", default: false },
    /** Another Node executable (say Node 26 from .ci/node.sh): this checkout run by it too, in the same rounds. */
    node: { type: "string" },
  },
});
const seconds = Number(values.seconds);
const connectionCounts = values.connections.split(",").map(Number);
const rounds = Number(values.rounds);
const contractCount = Number(values.contracts);
const largeSenders = Number(values.senders);
const instanceCount = Number(values.instances);
if (![1, 2].includes(instanceCount)) throw new Error("--instances: 1 or 2");
if (instanceCount > 1 && !values.postgres) throw new Error("--instances 2 needs --postgres: PGlite serves one process");
const SCENARIOS = ["whitelist", "limited", "large"] as const;
const scenarios = values["set-ups"].split(",").map((name) => {
  const scenario = SCENARIOS.find((known) => known === name);
  if (!scenario) throw new Error(`--set-ups: unknown set-up "${name}" (known: ${SCENARIOS.join(", ")})`);
  return scenario;
});
const ROOT = path.resolve(import.meta.dirname, "..");
const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const accountAbi = parseAbi(["function execute_ncC(address dest, uint256 value, bytes func)"]);
const callData = encodeFunctionData({
  abi: accountAbi,
  functionName: "execute_ncC",
  args: [TARGET, 0n, encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [1n] })],
});

const ENTRY_POINTS = { "0.7": ENTRY_POINT_V07_ADDRESS, "0.8": ENTRY_POINT_V08_ADDRESS } as const;
const entryPointVersion = values["entry-point"];
if (entryPointVersion !== "0.6" && !Object.hasOwn(ENTRY_POINTS, entryPointVersion)) {
  throw new Error("--entry-point: 0.6, 0.7 or 0.8");
}
const laterEntryPoint = ENTRY_POINTS[entryPointVersion as keyof typeof ENTRY_POINTS] as Address | undefined;

/** The n-th request: a sender among `senders` and that sender's next nonce, in the chosen version's form. */
const rpcBody = (n: number, senders = 1000) => {
  const common = {
    sender: `0x${(1 + (n % senders)).toString(16).padStart(40, "0")}`,
    nonce: `0x${Math.floor(n / senders).toString(16)}`,
    callData,
    callGasLimit: "0x1a930",
    verificationGasLimit: "0xdf21",
    preVerificationGas: "0x1267c",
    maxFeePerGas: "0xc02244",
    maxPriorityFeePerGas: "0xf4240",
    signature: "0x",
  };
  const params = laterEntryPoint
    ? [common, laterEntryPoint, {}]
    : [
        { ...common, initCode: "0x" },
        { mode: "SPONSORED", calculateGasLimits: false, expiryDuration: 300 },
      ];
  return JSON.stringify({ jsonrpc: "2.0", id: n, method: "pm_sponsorUserOperation", params });
};

let offset = 0;

interface Measured extends LoadResult {
  /** CPU µs per answer of the server process; of PostgreSQL's backends for this database (PostgreSQL runs only). */
  serverCpuUs: number;
  postgresCpuUs?: number;
  /** The share of the machine's CPU time used by processes other than the server, PostgreSQL and this load generator. */
  othersShare: number;
  /** Group-commit statements per answer, from the services' own metrics: record batches and limit pre-check batches. */
  statements?: Statements;
}

type Statements = Record<BatchName, number>;

/**
 * The group commits' batch counts so far, summed over the given services' /metrics: each batch is one statement (the
 * records with their limits, or the limits' pre-check). A count, not a timing, so it is exact under any load: what the
 * CPU figures, whose rounds spread by a third on a shared machine, cannot show.
 */
async function batchCounts(servers: string[]): Promise<Statements> {
  const counts: Statements = { sponsorships: 0, limit_checks: 0 };
  for (const server of servers) {
    const text = await (await fetch(`${server}/metrics`)).text();
    for (const batch of Object.keys(counts) as BatchName[]) {
      const line = new RegExp(`^paymaster_group_commit_batch_size_count\\{batch="${batch}"\\} (\\d+)$`, "m").exec(text);
      counts[batch] += Number(line?.[1] ?? 0);
    }
  }
  return counts;
}

/**
 * Warm-up first (JIT, pools, caches), then the timed run with the CPU time of the server (and PostgreSQL's backends)
 * read from /proc around it; each run continues the nonces, so no request repeats an earlier one.
 */
async function measure(
  urls: string[],
  servers: number[],
  connections: number,
  postgresPids?: () => Promise<number[]>,
  senders = 1000,
  /** Whether `urls` are the service's (the empty handler has no metrics). */
  countStatements = false,
): Promise<Measured> {
  // The connections split between the instances, each its own load generator, all at once.
  const loadAll = (body: (n: number) => string, seconds: number) =>
    Promise.all(
      urls.map((url, i) =>
        load(url, (n) => body(n * urls.length + i), { connections: Math.ceil(connections / urls.length), seconds }),
      ),
    );
  await loadAll((n) => rpcBody(offset + n, senders), 1);
  offset += 10_000_000;
  const body = (n: number) => rpcBody(offset + n, senders);
  // Read outside the CPU window, so that the scrapes cost the service nothing measured.
  const services = countStatements ? urls.map((url) => new URL(url).origin) : [];
  const batchesBefore = countStatements ? await batchCounts(services) : undefined;
  const machineBefore = machineCpuMicros();
  const selfBefore = process.cpuUsage();
  const serversCpu = () => servers.reduce((sum, pid) => sum + processCpuMicros(pid), 0);
  const serverBefore = serversCpu();
  const postgres = postgresPids
    ? await cpuDuring(postgresPids, () => loadAll(body, seconds))
    : { result: await loadAll(body, seconds), micros: 0 };
  const serverMicros = serversCpu() - serverBefore;
  const self = process.cpuUsage(selfBefore);
  const machine = machineCpuMicros();
  offset += 10_000_000;
  const result = combined(postgres.result);
  const answers = Math.max(result.requests, 1);
  const batchesAfter = batchesBefore ? await batchCounts(services) : undefined;
  const busy = machine.busy - machineBefore.busy;
  const others = busy - serverMicros - postgres.micros - self.user - self.system;
  return {
    ...result,
    serverCpuUs: Math.round(serverMicros / answers),
    ...(postgresPids ? { postgresCpuUs: Math.round(postgres.micros / answers) } : {}),
    othersShare: Math.max(0, others) / Math.max(machine.total - machineBefore.total, 1),
    ...(batchesBefore && batchesAfter
      ? {
          statements: {
            sponsorships: (batchesAfter.sponsorships - batchesBefore.sponsorships) / answers,
            limit_checks: (batchesAfter.limit_checks - batchesBefore.limit_checks) / answers,
          },
        }
      : {}),
  };
}

/** The instances' loads as one: answers and rates add up, the latencies are the worst instance's. */
function combined(results: LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  return {
    requestsPerSecond: sum((r) => r.requestsPerSecond),
    requests: sum((r) => r.requests),
    p50Ms: Math.max(...results.map((r) => r.p50Ms)),
    p99Ms: Math.max(...results.map((r) => r.p99Ms)),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
  };
}

/** Busy and total CPU time of the whole machine so far (all cores), in microseconds, from /proc/stat. */
function machineCpuMicros(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] as string;
  const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, t) => sum + t, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: ((total - idle) * 1_000_000) / 100, total: (total * 1_000_000) / 100 };
}

/** The empty handler in its own process; returns its URL, its pid and how to stop it. */
async function emptyServer() {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/emptyServer.ts"], { cwd: ROOT, stdio: "pipe" });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      const match = /PORT (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`empty server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/api/v1/31337/key`,
    pid: child.pid as number,
    stop: () => child.kill("SIGTERM"),
  };
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
async function setUpDapp(base: string, authToken: string, name: string) {
  const dapp = await api(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    {
      name,
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

/**
 * Whitelists `count - 1` more contracts beside the target, each with an ABI of its own (so that none shares a parse),
 * ten requests at a time.
 */
async function addContracts(base: string, headers: Record<string, string>, count: number) {
  let next = 1;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      await api(base, "POST", "smart-contract", headers, {
        name: `contract-${i}`,
        address: `0x${(0x2000000 + i).toString(16).padStart(40, "0")}`,
        abi: JSON.stringify(parseAbi(["function mint(uint256 amount)", `function f${i}(address to, uint256 amount)`])),
        whitelistedMethods: ["mint", `f${i}`],
      });
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}

/**
 * Limits far above what a run can use, so the ledger does all its work and never refuses: a COUNT limit over the
 * whole dApp and a NATIVE_ASSET limit per sender.
 */
async function addLimits(base: string, headers: Record<string, string>) {
  for (const [name, type, thresholdType, threshold] of [
    ["count", "PAYMASTER", "COUNT", 1e12],
    ["spend", "SMART_ACCOUNT", "NATIVE_ASSET", 1e9],
  ] as const) {
    await api(base, "POST", "paymaster-policy", headers, {
      name,
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type, cycleDuration: { value: 1, unit: "day" }, threshold, thresholdType },
    });
  }
}

async function checkSponsored(url: string) {
  const reply = await fetch(url, {
    method: "POST",
    body: rpcBody(-1 >>> 0),
    headers: { "content-type": "application/json" },
  });
  const json = (await reply.json()) as { result?: { paymasterAndData?: string; paymasterData?: string } };
  // v0.6: the paymaster's address and its 256 bytes; v0.7 and v0.8: the 256 bytes of paymasterData apart.
  const signed = laterEntryPoint
    ? json.result?.paymasterData?.length === 2 + 256 * 2
    : json.result?.paymasterAndData?.length === 2 + 276 * 2;
  if (!signed) throw new Error(`not sponsored: ${JSON.stringify(json)}`);
}

interface Storage {
  env: NodeJS.ProcessEnv;
  authToken?: string;
  /** PostgreSQL's backends serving the service (PostgreSQL runs only). */
  postgresPids?: () => Promise<number[]>;
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
  const { authToken } = await createAccount(db, "bench", Date.now());
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
    // The backends of the service's pool: PostgreSQL's shared writers (WAL writer, checkpointer) serve every database
    // of the server, other helpers' tests included, so they are left out.
    postgresPids: async () =>
      (
        await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
          [name],
        )
      ).map((row) => Number(row.pid)),
    open: () => openDatabase({ url: target.toString() }),
    cleanUp: async () => {
      await admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const database = values.postgres ? "PostgreSQL" : "PGlite";
const scenarioNames = {
  whitelist: "whitelist rule",
  limited: "whitelist + COUNT + per-sender NATIVE_ASSET",
  large: `the same, ${contractCount.toLocaleString("en")} contracts, ${largeSenders.toLocaleString("en")} senders`,
};

interface Build {
  label: string;
  cwd: string;
  /** Settings added to the service's environment (the PKCS#11 signer's). */
  env?: Record<string, string>;
  /** The Node executable that runs the service; this process's own by default. */
  node?: string;
}

interface Started {
  build: Build;
  storage: Storage;
  running: RunningService;
  pid: number;
  whitelist: string;
  limited: string;
  large: string;
  /** With --instances 2: the second service on the same database, whose URLs differ from the first's by the port. */
  second?: RunningService;
}

const TOKEN_LINE = /authToken, shown only this once:\n(pm_\S+)/;

async function startBuild(build: Build): Promise<Started> {
  const storage = values.postgres ? await postgresStorage() : await embeddedStorage();
  if (build.env) {
    Object.assign(storage.env, build.env);
    // The token's key replaces the generated one: the service refuses two signer keys.
    delete storage.env.SIGNER_PRIVATE_KEY;
  }
  const profile = values["cpu-prof"];
  const args = values.dist ? ["--enable-source-maps", "dist/main.js"] : ["--import", "tsx", "src/main.ts"];
  // Request logs as the service's default level writes them; the start line is all the bench reads.
  const start = () =>
    startService({ ...storage.env, LOG_LEVEL: storage.env.DATABASE_URL ? "info" : "warn" }, undefined, {
      args: profile ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(profile)}`, ...args] : args,
      cwd: build.cwd,
      ...(build.node ? { node: build.node } : {}),
    });
  const running = await start();
  // The first start prints the development account's token after it listens: wait for that line, not whatever came.
  const authToken = storage.authToken ?? (TOKEN_LINE.exec(await running.outputMatching(TOKEN_LINE))?.[1] as string);
  const whitelist = await setUpDapp(running.baseUrl, authToken, "bench-whitelist");
  const limited = await setUpDapp(running.baseUrl, authToken, "bench-limits");
  await addLimits(running.baseUrl, limited.headers);
  const large = await setUpDapp(running.baseUrl, authToken, "bench-large");
  await addLimits(running.baseUrl, large.headers);
  const since = Date.now();
  await addContracts(running.baseUrl, large.headers, contractCount);
  console.error(
    `${build.label}: ${contractCount} contracts whitelisted in ${Math.round((Date.now() - since) / 1000)} s`,
  );
  await checkSponsored(whitelist.url);
  await checkSponsored(limited.url);
  await checkSponsored(large.url);
  const second = instanceCount > 1 ? await start() : undefined;
  if (second) await checkSponsored(whitelist.url.replace(running.baseUrl, second.baseUrl));
  return {
    second,
    build,
    storage,
    running,
    pid: running.process.pid as number,
    whitelist: whitelist.url,
    limited: limited.url,
    large: large.url,
  };
}

/**
 * What each service spends with no request at all (its timers: the alert delivery poll, the caches' checks), in µs of
 * CPU per ms: read over 5 s that start 5 s after the last request, once the load's after-effects (the garbage
 * collector's and the embedded database's work on what the rounds left) have settled. Read right after the set-up, the
 * same figure was several times higher and told nothing about the service.
 */
async function idleCpu(pids: number[]): Promise<number[]> {
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  await pause(5000);
  const from = pids.map((pid) => processCpuMicros(pid));
  await pause(5000);
  return pids.map((pid, i) => Math.round((processCpuMicros(pid) - (from[i] as number)) / 5000));
}

/**
 * Rounds of every scenario at every connection count, the empty handler in each round beside the service (and beside
 * the other build, with --against), so that ratios and CPU compare like with like on a machine whose load varies; then
 * counts what was recorded.
 */
async function run(builds: Build[]) {
  const empty = await emptyServer();
  const started: Started[] = [];
  const results = new Map<string, Measured[]>();
  const notes: string[] = [];
  try {
    for (const build of builds) started.push(await startBuild(build));
    for (let round = 1; round <= rounds; round++) {
      for (const connections of connectionCounts) {
        const add = async (key: string, measured: Promise<Measured>) =>
          results.set(key, [...(results.get(key) ?? []), await measured]);
        await add(`empty Fastify handler @${connections}`, measure([empty.url], [empty.pid], connections));
        for (const scenario of scenarios) {
          for (const s of started) {
            const prefix = builds.length > 1 ? `${s.build.label}: ` : "";
            const senders = scenario === "large" ? largeSenders : 1000;
            await add(
              `${prefix}${database}, ${scenarioNames[scenario]} @${connections}`,
              measure([s[scenario]], [s.pid], connections, s.storage.postgresPids, senders, true),
            );
            if (s.second) {
              const second = s.second;
              await add(
                `${prefix}${database}, ${scenarioNames[scenario]}, 2 instances @${connections}`,
                measure(
                  [s[scenario], s[scenario].replace(s.running.baseUrl, second.baseUrl)],
                  [s.pid, second.process.pid as number],
                  connections,
                  s.storage.postgresPids,
                  senders,
                  true,
                ),
              );
            }
          }
        }
      }
      console.error(`round ${round} of ${rounds} done`);
    }
    const idle = await idleCpu(started.map((s) => s.pid));
    for (const [i, s] of started.entries()) {
      notes.push(
        `${s.build.label}: RSS at the end ${residentMegabytes(s.pid)} MB, CPU when idle after the load ${idle[i]} µs per ms`,
      );
    }
  } finally {
    empty.stop();
    for (const s of started) await Promise.all([s.running.stop(), s.second?.stop()]);
  }
  for (const s of started) {
    const db = await s.storage.open();
    const [row] = await db.query<{ count: string | number }>(
      "SELECT count(*) AS count FROM sponsorships WHERE sponsored",
    );
    await db.close();
    await s.storage.cleanUp();
    notes.push(`${s.build.label}: sponsorships recorded ${Number(row?.count ?? 0)}`);
  }
  return { results, notes };
}

function residentMegabytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

const range = (values: number[], digits = 0) => {
  const f = (v: number) => v.toFixed(digits);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const median = [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
  return min === max ? f(min) : `${f(median)} (${f(min)}–${f(max)})`;
};

const nodeVersion = (node: string) => execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
const builds: Build[] = [
  { label: values.pkcs11 ? "key file" : values.node ? `Node ${process.version}` : "this build", cwd: ROOT },
];
if (values.node) builds.push({ label: `Node ${nodeVersion(values.node)}`, cwd: ROOT, node: path.resolve(values.node) });
if (values.against)
  builds.push({ label: path.basename(path.resolve(values.against)), cwd: path.resolve(values.against) });
const hsm = values.pkcs11 ? createSoftHsm() : undefined;
if (hsm) {
  hsm.addToken("bench", "1234");
  hsm.addKey({ label: "bench", pin: "1234" }, "signer");
  builds.push({ label: "PKCS#11 SoftHSM2", cwd: ROOT, env: hsm.signerEnv("bench", "signer", "1234") });
}
const { results, notes } = await run(builds).finally(() => hsm?.remove());
const rows: Record<string, Record<string, string>> = {};
for (const [key, measured] of results) {
  const connections = key.slice(key.lastIndexOf("@") + 1);
  const empty = results.get(`empty Fastify handler @${connections}`) as Measured[];
  const ratios = measured.map((m, i) => m.requestsPerSecond / (empty[i] as Measured).requestsPerSecond);
  rows[key] = {
    "req/s": range(measured.map((m) => m.requestsPerSecond)),
    ratio: range(ratios, 3),
    "p99 ms": range(measured.map((m) => m.p99Ms)),
    "server CPU µs/req": range(measured.map((m) => m.serverCpuUs)),
    ...(values.postgres && !key.startsWith("empty")
      ? { "PostgreSQL CPU µs/req": range(measured.map((m) => m.postgresCpuUs ?? 0)) }
      : {}),
    ...(key.startsWith("empty")
      ? {}
      : {
          "statements/req: records + checks": `${range(
            measured.map((m) => m.statements?.sponsorships ?? 0),
            3,
          )} + ${range(
            measured.map((m) => m.statements?.limit_checks ?? 0),
            3,
          )}`,
        }),
    "others' CPU share": range(
      measured.map((m) => m.othersShare * 100),
      0,
    ),
  };
}
console.log(
  `EntryPoint v${entryPointVersion} operations, ${rounds} rounds of ${seconds} s per figure: median (min–max); others' CPU share: % of the machine's two cores`,
);
console.table(rows);
const failed = [...results.values()].flat().reduce((sum, r) => sum + r.non2xx + r.errors, 0);
console.log(`non-2xx answers and errors: ${failed}; ${notes.join("; ")}`);
console.log(
  "targets: server CPU ≤ 200 µs/req, ratio ≥ 0.2, p99 < 25 ms @50 and < 10 ms @10; PostgreSQL CPU ≤ 100 µs/req",
);
