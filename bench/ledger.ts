// Benchmark: the sponsorship ledger at 1,000,000 rows of one paymaster, on PostgreSQL and on PGlite: a page of 100
// (first page, a deep page through a cursor, filtered by status and by sender) and a 30-day stats query by day, each
// against the same query on a paymaster of 1,000 rows in the same database (the baseline).
//   npx tsx bench/ledger.ts                    both databases (PostgreSQL: DATABASE_URL, default the local test one)
//   options: --rows N (default 1000000), --baseline N (default 1000), --runs N (per query, default 50),
//            --only postgres|pglite, --explain (PostgreSQL: print each query's plan at N rows)
// Rows are written by generate_series in SQL, spread over the year before now: 10% refused, 70% mined, 20% released
// (expired unmined), the last ten minutes' unsettled rows pending; 10,000 senders.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { sponsorshipStats } from "../src/actions/sponsorshipLedger";
import { createAccount } from "../src/storage/accounts";
import { EMBEDDED_LEDGER_ANALYZE } from "../src/storage/analyzeOnGrowth";
import { type Database, openDatabase, type Queryable } from "../src/storage/database";
import { migrate } from "../src/storage/migrations";
import { insertPaymaster, type Paymaster } from "../src/storage/paymasters";
import { type LedgerFilter, ledgerPage, ledgerSize } from "../src/storage/sponsorshipLedger";

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "1000000" },
    baseline: { type: "string", default: "1000" },
    runs: { type: "string", default: "50" },
    only: { type: "string" },
    explain: { type: "boolean", default: false },
  },
});
const ROWS = Number(values.rows);
const BASELINE = Number(values.baseline);
const RUNS = Number(values.runs);
const YEAR_MS = 365 * 86_400_000;
const NOW_MS = Date.now();
const SENDERS = 10_000;
const senderOf = (n: number) => `0x${(n % SENDERS).toString(16).padStart(40, "0")}`;

/** `count` rows for the paymaster, newest at NOW_MS, one statement per chunk. */
async function fill(db: Database, paymaster: Paymaster, count: number): Promise<void> {
  const chunk = 100_000;
  const stepMs = YEAR_MS / count;
  for (let first = 0; first < count; first += chunk) {
    const last = Math.min(count, first + chunk) - 1;
    await db.query(
      `INSERT INTO sponsorships (id, paymaster_id, chain_id, sender, nonce, sponsored, reason, user_op_hash,
         valid_until, valid_after, rule_outcomes, entry_point, mode, worst_case_wei, actual_cost, tx_hash, settled_at,
         released_at, created_at)
       SELECT gen_random_uuid(), $1::uuid, 31337, '0x' || lpad(to_hex(n % ${SENDERS}), 40, '0'), n, n % 10 <> 0,
         CASE WHEN n % 10 = 0 THEN 'Cost cap exceeded' END,
         CASE WHEN n % 10 <> 0 THEN '0x' || lpad(to_hex(n), 64, '0') END,
         CASE WHEN n % 10 <> 0 THEN floor(extract(epoch FROM t))::bigint + 300 END,
         CASE WHEN n % 10 <> 0 THEN floor(extract(epoch FROM t))::bigint - 60 END,
         '[]'::jsonb, '0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789', 'SPONSORED',
         CASE WHEN n % 10 <> 0 THEN 290000000000000 END,
         CASE WHEN n % 10 BETWEEN 1 AND 7 AND t < $2::timestamptz - interval '10 minutes' THEN 100000000000000 + n END,
         CASE WHEN n % 10 BETWEEN 1 AND 7 AND t < $2::timestamptz - interval '10 minutes'
           THEN '0x' || lpad(to_hex(n), 64, 'f') END,
         CASE WHEN n % 10 BETWEEN 1 AND 7 AND t < $2::timestamptz - interval '10 minutes' THEN t + interval '30 seconds' END,
         CASE WHEN n % 10 >= 8 AND t < $2::timestamptz - interval '10 minutes' THEN t + interval '6 minutes' END,
         t
       FROM generate_series($3::int, $4::int) AS n,
         LATERAL (SELECT $2::timestamptz - n * $5::float8 * interval '1 millisecond' AS t) AS at`,
      [paymaster.id, new Date(NOW_MS).toISOString(), first, last, stepMs],
    );
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const round2 = (value: number) => Math.round(value * 100) / 100;

async function time(work: () => Promise<unknown>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < 5; i++) await work(); // warm-up: plans, caches
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await work();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  return { p50: round2(percentile(ms, 0.5)), p99: round2(percentile(ms, 0.99)) };
}

/** Runs a storage function's statements as EXPLAIN ANALYZE and prints their plans (the caller sees no rows). */
function explainingQueries(db: Queryable, label: string): Queryable {
  return {
    exec: (sql) => db.exec(sql),
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      if (sql.startsWith("SET ")) return db.query<Row>(sql, params);
      const plan = await db.query<{ "QUERY PLAN": string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
      console.log(`\n--- ${label}\n${plan.map((line) => line["QUERY PLAN"]).join("\n")}`);
      return [];
    },
  };
}

function explaining(db: Database, label: string): Database {
  return {
    ...db,
    ...explainingQueries(db, label),
    transaction: (work) => db.transaction((tx) => work(explainingQueries(tx, label))),
  };
}

interface Scenario {
  label: string;
  run(db: Database, paymaster: Paymaster): Promise<unknown>;
}

const nowSeconds = Math.floor(NOW_MS / 1000);
const filter = (paymaster: Paymaster, extra: Partial<LedgerFilter> = {}): LedgerFilter => ({
  paymasterId: paymaster.id,
  nowSeconds,
  ...extra,
});

/** The key of the row halfway down the paymaster's ledger: where a client paging through would be after half of it. */
async function middleKey(db: Queryable, paymaster: Paymaster, count: number) {
  const [row] = await db.query<{ id: string; micros: string }>(
    `SELECT id, (extract(epoch FROM created_at) * 1000000)::bigint::text AS micros FROM sponsorships
     WHERE paymaster_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1`,
    [paymaster.id, Math.floor(count / 2)],
  );
  if (!row) throw new Error("no middle row");
  return { createdMicros: BigInt(row.micros), id: row.id };
}

async function scenarios(db: Database, paymaster: Paymaster, count: number): Promise<Scenario[]> {
  const middle = await middleKey(db, paymaster, count);
  const actions = { db, chains: new Map(), now: () => NOW_MS, setupChanged: () => {} };
  return [
    { label: "first page", run: (q, p) => ledgerPage(q, filter(p), 101) },
    { label: "deep page (cursor at the middle)", run: (q, p) => ledgerPage(q, filter(p), 101, middle) },
    { label: "status=mined", run: (q, p) => ledgerPage(q, filter(p, { status: "mined" }), 101) },
    { label: "status=refused", run: (q, p) => ledgerPage(q, filter(p, { status: "refused" }), 101) },
    { label: "status=expired", run: (q, p) => ledgerPage(q, filter(p, { status: "expired" }), 101) },
    { label: "status=pending", run: (q, p) => ledgerPage(q, filter(p, { status: "pending" }), 101) },
    { label: "sender=", run: (q, p) => ledgerPage(q, filter(p, { sender: senderOf(77) }), 101) },
    {
      label: "sender= & status=mined",
      run: (q, p) => ledgerPage(q, filter(p, { sender: senderOf(77), status: "mined" }), 101),
    },
    {
      label: "stats: 30 days by day",
      run: (q, p) =>
        sponsorshipStats({ ...actions, db: q }, p, {
          bucket: "day",
          from: String(NOW_MS - 30 * 86_400_000),
          to: String(NOW_MS),
        }),
    },
    { label: "ledger size (metric)", run: (q) => ledgerSize(q) },
  ];
}

async function bench(kind: "postgres" | "pglite"): Promise<void> {
  const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test";
  const schema = `bench_ledger_${randomBytes(4).toString("hex")}`;
  let admin: Database | undefined;
  if (kind === "postgres") {
    admin = await openDatabase({ url });
    await admin.exec(`CREATE SCHEMA ${schema}`);
  }
  const db = kind === "postgres" ? await openDatabase({ url, schema }) : await openDatabase({});
  try {
    await migrate(db);
    const account = await createAccount(db, "bench", Date.now());
    const paymaster = (name: string) =>
      insertPaymaster(db, { accountId: account.id, name, chainId: 31337, type: "HYBRID", version: "1.0.0" });
    const big = await paymaster("big");
    const small = await paymaster("small");
    let start = performance.now();
    await fill(db, big, ROWS);
    await fill(db, small, BASELINE);
    const fillSeconds = (performance.now() - start) / 1000;
    // PostgreSQL's autovacuum analyzes the table soon after such a load; on PGlite the service does it as the table
    // grows (src/storage/analyzeOnGrowth.ts), which rows written here in SQL bypass: done at once on both.
    start = performance.now();
    await db.exec(kind === "postgres" ? "VACUUM ANALYZE sponsorships" : EMBEDDED_LEDGER_ANALYZE);
    const analyzeSeconds = (performance.now() - start) / 1000;
    console.log(
      `\n## ${kind}: ${ROWS} rows written in ${fillSeconds.toFixed(1)} s` +
        `, ${kind === "postgres" ? "VACUUM ANALYZE" : "ANALYZE"} ${analyzeSeconds.toFixed(1)} s` +
        `; ledger ${JSON.stringify(await ledgerSize(db))}\n`,
    );
    console.log(`| query | ${ROWS} rows p50 / p99 ms | ${BASELINE} rows p50 / p99 ms |`);
    console.log("|---|---|---|");
    const bigScenarios = await scenarios(db, big, ROWS);
    const smallScenarios = await scenarios(db, small, BASELINE);
    for (const [i, scenario] of bigScenarios.entries()) {
      const atScale = await time(() => scenario.run(db, big));
      const baseline = await time(() => (smallScenarios[i] as Scenario).run(db, small));
      console.log(`| ${scenario.label} | ${atScale.p50} / ${atScale.p99} | ${baseline.p50} / ${baseline.p99} |`);
    }
    if (values.explain) {
      for (const scenario of bigScenarios.slice(0, -1)) await scenario.run(explaining(db, scenario.label), big);
    }
  } finally {
    await db.close();
    if (admin) {
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    }
  }
}

for (const kind of ["postgres", "pglite"] as const) {
  if (values.only === undefined || values.only === kind) await bench(kind);
}
