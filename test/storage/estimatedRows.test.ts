// The row estimate the ledger's size metric reads above 100,000 rows (src/storage/sponsorshipLedger.ts): the last
// analysis's rows per page times the pages the table has now, so it follows the growth between two analyses (after
// about a tenth of growth: autovacuum on PostgreSQL, src/storage/analyzeOnGrowth.ts on PGlite).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database } from "../../src/storage/database";
import { estimatedRows } from "../../src/storage/sponsorshipLedger";
import { openTestDatabase } from "../helpers/database";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(() => db.close());

/** Rows as wide as a ledger row's narrow part, so that a page holds tens of them. */
const insert = (from: number, to: number) =>
  db.exec(`INSERT INTO growing SELECT n, repeat('x', 60) FROM generate_series(${from}, ${to}) AS n`);

test("never analyzed: negative, so the caller counts", async () => {
  // Autovacuum kept off on PostgreSQL: it must not analyze between the test's own steps.
  await db.exec("CREATE TABLE growing (n int, filler text) WITH (autovacuum_enabled = false)");
  await insert(1, 10);
  assert.ok((await estimatedRows(db, "growing")) < 0);
});

test("after an analysis, the estimate follows the rows written since, where reltuples stays put", async () => {
  await insert(11, 10_000);
  await db.exec("ANALYZE growing");
  const analyzed = await estimatedRows(db, "growing");
  assert.ok(Math.abs(analyzed - 10_000) <= 500, `${analyzed} just after the analysis`);

  await insert(10_001, 30_000);
  const [stale] = await db.query<{ rows: number }>(
    "SELECT reltuples::int AS rows FROM pg_class WHERE oid = 'growing'::regclass",
  );
  assert.ok((stale?.rows ?? 0) <= 10_500, `reltuples ${stale?.rows} still the analysis's`);
  const grown = await estimatedRows(db, "growing");
  assert.ok(Math.abs(grown - 30_000) <= 1_500, `${grown} after tripling without an analysis`);
});

test("an unknown table: negative", async () => {
  assert.ok((await estimatedRows(db, "no_such_table")) < 0);
});
