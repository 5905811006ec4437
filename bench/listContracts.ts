// Benchmark: GET smart-contract at 10,000 contracts, whole and a page of 100 at a time, over real HTTP against the
// service in a child process; one request at a time, so that latency is the request's own.
//   npx tsx bench/listContracts.ts                 on PGlite
//   npx tsx bench/listContracts.ts --postgres      on the PostgreSQL of DATABASE_URL (default: the local test one)
//   options: --analyze (PGlite: with table statistics, see below), --contracts N (default 10000), --requests N (pages per scenario, default 300; the whole list: a tenth)
//            --against DIR: another checkout, started beside this one; only the one-contract list (where authentication
//            weighs most) is measured, turn about in --rounds N rounds (default 3), an A/B under the same load
// CPU per answer is the service process's, read from /proc around the run (PostgreSQL's backends' too with --postgres).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { generatePrivateKey } from "viem/accounts";
import { createAccount } from "../src/storage/accounts";
import { EMBEDDED_CONTRACTS_ANALYZE } from "../src/storage/analyzeOnGrowth";
import { type Database, openDatabase } from "../src/storage/database";
import { pgliteFolder } from "../src/storage/dataFolder";
import { migrate } from "../src/storage/migrations";
import { insertPaymaster } from "../src/storage/paymasters";
import { embeddedEnv, type RunningService, startService } from "../test/helpers/service";
import { cpuDuring, processCpuMicros } from "./cpu";

const { values } = parseArgs({
  options: {
    contracts: { type: "string", default: "10000" },
    requests: { type: "string", default: "300" },
    postgres: { type: "boolean", default: false },
    /** PGlite: the statistics the service gathers as contracts are written through the API (see seed). */
    analyze: { type: "boolean", default: false },
    against: { type: "string" },
    rounds: { type: "string", default: "3" },
  },
});
const ROOT = path.resolve(import.meta.dirname, "..");
const contractCount = Number(values.contracts);
const requests = Number(values.requests);

/** A small token ABI (about 0.9 kB of JSON per contract in the answer, ABI and method lists included). */
const ABI = JSON.stringify(
  ["transfer", "approve", "mint", "burn"].map((name) => ({
    type: "function",
    name,
    inputs: [
      { name: "to", type: "address" },
      { name: "amount", type: "uint256" },
    ],
    outputs: [{ name: "", type: "bool" }],
    stateMutability: "nonpayable",
  })),
);
const METHODS = [
  "transfer(address,uint256)",
  "approve(address,uint256)",
  "mint(address,uint256)",
  "burn(address,uint256)",
];

/** The management headers of the large paymaster and of a second one with a single contract. */
interface Seeded {
  large: Record<string, string>;
  one: Record<string, string>;
}

/** Accounts, paymasters and their contracts, written before the service starts. */
async function seed(db: Database): Promise<Seeded> {
  await migrate(db);
  const large = await seedPaymaster(db, contractCount);
  const one = await seedPaymaster(db, 1);
  // PostgreSQL's autovacuum analyzes a table soon after this many inserts and the planner then reads the page through
  // the index; done here at once so the figures are those of that state. PGlite has no autovacuum: the service
  // analyzes the contracts it writes through the API as the table grows (src/storage/analyzeOnGrowth.ts), which these
  // SQL writes bypass; --analyze runs that statement here.
  if (values.postgres) await db.exec("ANALYZE smart_contracts");
  else if (values.analyze) await db.exec(EMBEDDED_CONTRACTS_ANALYZE);
  return { large, one };
}

async function seedPaymaster(db: Database, contractCount: number): Promise<Record<string, string>> {
  const account = await createAccount(db, "bench", Date.now());
  const paymaster = await insertPaymaster(db, {
    accountId: account.id,
    name: "bench",
    chainId: 31337,
    type: "HYBRID",
    version: "1.0.0",
  });
  const perStatement = 500;
  for (let first = 0; first < contractCount; first += perStatement) {
    const count = Math.min(perStatement, contractCount - first);
    // One statement per 500 rows; each row its own created_at, as contracts registered one by one would have.
    await db.query(
      `INSERT INTO smart_contracts (id, paymaster_id, name, address, abi, methods, whitelisted_methods, created_at)
       SELECT gen_random_uuid(), $1, 'c' || n, '0x' || lpad(to_hex(n), 40, '0'), $2, $3, $3,
              now() + n * interval '1 millisecond'
       FROM generate_series($4::int, $5::int) AS n`,
      [paymaster.id, ABI, JSON.stringify(METHODS), first + 1, first + count],
    );
  }
  return { authToken: account.authToken, apiKey: paymaster.apiKey };
}

interface Scenario {
  label: string;
  count: number;
  /** The query string of the i-th request. */
  query(i: number): string;
}

interface Result {
  label: string;
  p50Ms: number;
  p99Ms: number;
  serverCpuMs: number;
  postgresCpuMs?: number;
  bytes: number;
  rows: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const round2 = (value: number) => Math.round(value * 100) / 100;

async function run(
  base: string,
  headers: Record<string, string>,
  server: number,
  scenario: Scenario,
  postgresPids?: () => Promise<number[]>,
): Promise<Result> {
  const get = async (i: number) => {
    const response = await fetch(`${base}/api/v2/public/sdk/smart-contract${scenario.query(i)}`, { headers });
    const text = await response.text();
    if (!response.ok) throw new Error(`${scenario.label}: ${response.status} ${text.slice(0, 200)}`);
    return text;
  };
  for (let i = 0; i < Math.max(3, scenario.count / 10); i++) await get(i); // warm-up: JIT, pool, page cache
  const latencies: number[] = [];
  let last = "";
  const serverBefore = processCpuMicros(server);
  const measured = await cpuDuring(postgresPids ?? (async () => []), async () => {
    for (let i = 0; i < scenario.count; i++) {
      const started = performance.now();
      last = await get(i);
      latencies.push(performance.now() - started);
    }
  });
  const serverMicros = processCpuMicros(server) - serverBefore;
  latencies.sort((a, b) => a - b);
  return {
    label: scenario.label,
    p50Ms: round2(percentile(latencies, 0.5)),
    p99Ms: round2(percentile(latencies, 0.99)),
    serverCpuMs: round2(serverMicros / scenario.count / 1000),
    ...(postgresPids ? { postgresCpuMs: round2(measured.micros / scenario.count / 1000) } : {}),
    bytes: Buffer.byteLength(last),
    rows: (JSON.parse(last) as { data: unknown[] }).data.length,
  };
}

/** Cursors of every page of 100, read once, so that the timed pages are spread over the whole list. */
async function pageCursors(base: string, headers: Record<string, string>): Promise<string[]> {
  const cursors: string[] = [];
  let query = "?limit=100";
  for (;;) {
    const response = await fetch(`${base}/api/v2/public/sdk/smart-contract${query}`, { headers });
    const { nextCursor } = (await response.json()) as { nextCursor: string | null };
    if (nextCursor === null) return cursors;
    cursors.push(nextCursor);
    query = `?limit=100&cursor=${nextCursor}`;
  }
}

/** One build's service on data of its own, seeded the same way. */
interface Started {
  label: string;
  service: RunningService;
  headers: Seeded;
  postgresPids?: () => Promise<number[]>;
  stop(): Promise<void>;
}

async function startBuild(label: string, cwd: string): Promise<Started> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-list-"));
  const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const dbName = `paymaster_bench_list_${process.pid}_${label.replace(/\W/g, "_")}`;
  let admin: Database | undefined;
  let env: NodeJS.ProcessEnv;
  let headers: Seeded;
  const cleanUp = async () => {
    if (admin) {
      await admin.exec(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.close();
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  if (values.postgres) {
    admin = await openDatabase({ url });
    await admin.exec(`CREATE DATABASE ${dbName}`);
    const target = new URL(url);
    target.pathname = `/${dbName}`;
    const db = await openDatabase({ url: target.toString() });
    headers = await seed(db);
    await db.close();
    env = {
      ...process.env,
      DATABASE_URL: target.toString(),
      SIGNER_PRIVATE_KEY: generatePrivateKey(),
      WEBHOOK_SIGNING_KEY: generatePrivateKey(),
      DATA_DIR: dataDir,
      PORT: "0",
      // startService reads the port from the start line, logged at info.
      LOG_LEVEL: "info",
    };
  } else {
    const db = await openDatabase({ dataDir: pgliteFolder(dataDir) });
    headers = await seed(db);
    await db.close();
    env = embeddedEnv(dataDir);
  }
  const service = await startService(env, undefined, { args: ["--import", "tsx", "src/main.ts"], cwd }).catch(
    async (error) => {
      await cleanUp();
      throw error;
    },
  );
  const postgresPids = admin
    ? async () =>
        (
          await (admin as Database).query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
            [dbName],
          )
        ).map((row) => Number(row.pid))
    : undefined;
  return {
    label,
    service,
    headers,
    postgresPids,
    async stop() {
      await service.stop();
      await cleanUp();
    },
  };
}

const oneContract = (count: number): Scenario => ({ label: "one contract, whole list", count, query: () => "" });

async function main() {
  const builds = [{ label: "this build", cwd: ROOT }];
  if (values.against)
    builds.push({ label: path.basename(path.resolve(values.against)), cwd: path.resolve(values.against) });
  const started: Started[] = [];
  try {
    for (const build of builds) started.push(await startBuild(build.label, build.cwd));
    if (values.against) return await abRounds(started);
    const [only] = started as [Started];
    const { service, headers, postgresPids } = only;
    const server = service.process.pid as number;
    const cursors = await pageCursors(service.baseUrl, headers.large);
    const scenarios: Scenario[] = [
      { label: "page of 100, first", count: requests, query: () => "?limit=100" },
      {
        label: "page of 100, anywhere",
        count: requests,
        query: (i) => `?limit=100&cursor=${cursors[(i * 37) % cursors.length]}`,
      },
      { label: `whole list (${contractCount})`, count: Math.max(5, Math.round(requests / 10)), query: () => "" },
    ];
    const results: Result[] = [];
    for (const scenario of scenarios) {
      results.push(await run(service.baseUrl, headers.large, server, scenario, postgresPids));
    }
    results.push(await run(service.baseUrl, headers.one, server, oneContract(requests * 3), postgresPids));
    console.log(`GET smart-contract, ${contractCount} contracts, ${values.postgres ? "PostgreSQL" : "PGlite"}`);
    console.table(results);
  } finally {
    await Promise.all(started.map((build) => build.stop()));
  }
}

/** The one-contract list on each build in turn, round after round; the median of the rounds and their range. */
async function abRounds(started: Started[]): Promise<void> {
  const rounds = Number(values.rounds);
  const byBuild = new Map<string, Result[]>(started.map((build) => [build.label, []]));
  for (let round = 0; round < rounds; round++) {
    for (const build of round % 2 === 0 ? started : [...started].reverse()) {
      const server = build.service.process.pid as number;
      const result = await run(
        build.service.baseUrl,
        build.headers.one,
        server,
        oneContract(requests * 3),
        build.postgresPids,
      );
      byBuild.get(build.label)?.push(result);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const range = (values: number[]) => `${Math.round(Math.min(...values))}–${Math.round(Math.max(...values))}`;
  console.log(
    `GET smart-contract, one contract, ${values.postgres ? "PostgreSQL" : "PGlite"}, ${rounds} rounds of ${requests * 3}`,
  );
  console.table(
    [...byBuild].map(([label, results]) => {
      const cpu = results.map((r) => r.serverCpuMs * 1000);
      const pg = results.map((r) => (r.postgresCpuMs ?? 0) * 1000);
      const p50 = results.map((r) => r.p50Ms);
      return {
        build: label,
        "service CPU µs (median)": Math.round(median(cpu)),
        range: range(cpu),
        ...(values.postgres ? { "PostgreSQL CPU µs": Math.round(median(pg)), "PG range": range(pg) } : {}),
        "p50 ms": median(p50),
      };
    }),
  );
}

await main();
