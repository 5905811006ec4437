// The embedded database on its worker thread, against a real PGlite data folder: what the repositories rely on must
// hold across the thread boundary (rows and their types, transactions, PostgreSQL's error fields, durability).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { type Database, isUniqueViolation, openDatabase } from "../../src/storage/database";

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-worker-db-"));
let db: Database;

before(async () => {
  db = await openDatabase({ dataDir });
  await db.exec(`
    CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL UNIQUE, amount numeric(78, 0), data jsonb,
      at timestamptz NOT NULL DEFAULT now());`);
});
after(async () => {
  await db?.close().catch(() => {});
  rmSync(dataDir, { recursive: true, force: true });
});

test("rows come back with PGlite's types: numbers, numeric text, jsonb objects, dates", async () => {
  const huge = (2n ** 255n).toString();
  await db.query("INSERT INTO items (id, name, amount, data) VALUES ($1, $2, $3, $4)", [1, "one", huge, { a: [1] }]);
  const [row] = await db.query<{ id: number; name: string; amount: string; data: unknown; at: Date }>(
    "SELECT * FROM items WHERE id = $1",
    [1],
  );
  assert.equal(row?.id, 1);
  assert.equal(row?.amount, huge);
  assert.deepEqual(row?.data, { a: [1] });
  assert.ok(row?.at instanceof Date);
});

test("a unique violation keeps its code and constraint, so repositories can name it", async () => {
  const error = await db.query("INSERT INTO items (id, name) VALUES (2, 'one')").then(
    () => assert.fail("a duplicate name was stored"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof Error);
  assert.ok(isUniqueViolation(error, "items_name_key"), JSON.stringify(error));
  const nul = await db.query("INSERT INTO items (id, name) VALUES (3, $1)", ["a\u0000b"]).then(
    () => assert.fail("a NUL character was stored"),
    (e: unknown) => e as { code?: string },
  );
  assert.match(nul.code ?? "", /^(22021|22P05)$/);
});

test("a transaction commits all its statements together", async () => {
  const count = await db.transaction(async (tx) => {
    await tx.query("INSERT INTO items (id, name) VALUES (10, 'ten')");
    await tx.exec("INSERT INTO items (id, name) VALUES (11, 'eleven')");
    return (await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM items WHERE id >= 10"))[0]?.n;
  });
  assert.equal(count, 2);
  const rows = await db.query<{ id: number }>("SELECT id FROM items WHERE id >= 10 ORDER BY id");
  assert.deepEqual(
    rows.map((r) => r.id),
    [10, 11],
  );
});

test("a transaction that throws leaves nothing and rethrows its own error", async () => {
  const failure = new Error("stop here");
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query("INSERT INTO items (id, name) VALUES (20, 'twenty')");
      throw failure;
    }),
    (error) => error === failure,
  );
  await assert.rejects(
    db.transaction(async (tx) => {
      await tx.query("INSERT INTO items (id, name) VALUES (21, 'twenty-one')");
      await tx.query("INSERT INTO items (id, name) VALUES (22, 'one')");
    }),
    (error) => isUniqueViolation(error),
  );
  assert.deepEqual(await db.query("SELECT id FROM items WHERE id BETWEEN 20 AND 22"), []);
});

test("a statement outside a transaction waits for it, and sees only what it committed", async () => {
  let release: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const transaction = db.transaction(async (tx) => {
    await tx.query("INSERT INTO items (id, name) VALUES (30, 'thirty')");
    await held;
    await tx.query("UPDATE items SET name = 'thirty, final' WHERE id = 30");
  });
  // Give the transaction time to begin, then read from outside while it is open.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const outside = db.query<{ name: string }>("SELECT name FROM items WHERE id = 30");
  release();
  await transaction;
  assert.deepEqual(await outside, [{ name: "thirty, final" }]);
});

test("what was written is in the folder after a close, and a closed database refuses", async () => {
  await db.close();
  await assert.rejects(db.query("SELECT 1"), /database thread/);
  db = await openDatabase({ dataDir });
  const rows = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM items");
  assert.equal(rows[0]?.n, 4, "rows 1, 10, 11 and 30");
});
