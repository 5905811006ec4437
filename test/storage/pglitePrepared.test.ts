// The embedded database's prepared statements (src/storage/pglitePrepared.ts): their parameters travel as literals
// written by us, so every text must arrive exactly as PGlite's own parameter binding delivers it. PGlite always: the
// PostgreSQL pass runs these statements as ordinary named statements and has no such literals.
import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, test } from "node:test";
import type { Database } from "../../src/storage/database";
import { PglitePrepared, pglitePreparedOf } from "../../src/storage/pglitePrepared";
import { openPgliteFromSnapshot } from "../helpers/pgliteSnapshot";

let db: Database;
before(async () => {
  db = await openPgliteFromSnapshot();
  await db.exec("CREATE TABLE echoed (via text NOT NULL, position int NOT NULL, value text, amount numeric)");
});
after(() => db.close());

const INSERT = `INSERT INTO echoed (via, position, value, amount)
  SELECT ($1::text[])[1], position::int, value, amount::numeric
  FROM unnest($2::text[], $3::text[], $4::text[]) AS t(position, value, amount)`;

/** Writes `values` both ways (prepared literals, PGlite's bound parameters) and reads back each way's rows. */
async function echo(values: (string | null)[]): Promise<{ prepared: unknown[]; bound: unknown[] }> {
  await db.exec("TRUNCATE echoed");
  const positions = values.map((_, i) => String(i));
  const amounts = values.map((_, i) => `${i}000000000000000000000000000000`);
  await pglitePreparedOf(db).run(INSERT, [["prepared"], positions, values, amounts]);
  await db.query(INSERT, [["bound"], positions, values, amounts]);
  const read = (via: string) =>
    db.query("SELECT value, amount::text AS amount FROM echoed WHERE via = $1 ORDER BY position", [via]);
  return { prepared: await read("prepared"), bound: await read("bound") };
}

test("texts that array and string literals treat specially arrive as PGlite's bound parameters deliver them", async () => {
  const values = [
    "plain",
    "",
    " spaced ",
    "it's",
    "''",
    'say "hi"',
    "back\\slash",
    "\\",
    '\\"',
    "{braces}",
    "a,b",
    "NULL",
    "null",
    null,
    "new\nline\ttab\rreturn",
    "$$dollar$$",
    "$1",
    "); DROP TABLE echoed; --",
    "ünïcödé ✓ 🚀",
    "\u2028\u2029",
    "E'\\x41'",
  ];
  const { prepared, bound } = await echo(values);
  assert.deepEqual(prepared, bound);
  assert.deepEqual(
    prepared.map((row) => (row as { value: unknown }).value),
    values,
  );
});

test("random texts of the characters that need escaping, a thousand of them, arrive unchanged", async () => {
  const alphabet = ["'", '"', "\\", "{", "}", ",", " ", "\n", "a", "N", "U", "L", "$", "(", ")", ";", "é", "🚀"];
  const values = Array.from({ length: 1000 }, () =>
    Array.from({ length: randomInt(0, 12) }, () => alphabet[randomInt(alphabet.length)]).join(""),
  );
  const { prepared, bound } = await echo(values);
  assert.deepEqual(prepared, bound);
  assert.equal(prepared.length, 1000);
});

test("an empty batch is an empty array, not a missing parameter", async () => {
  const { prepared, bound } = await echo([]);
  assert.deepEqual(prepared, []);
  assert.deepEqual(bound, []);
});

test("a statement deallocated behind its back is prepared again and runs", async () => {
  await echo(["before"]);
  await db.exec("DEALLOCATE ALL");
  const { prepared } = await echo(["after"]);
  assert.deepEqual(prepared, [{ value: "after", amount: "0" }]);
});

test("two users of one database share its statements: the second's prepare finds the name taken and goes on", async () => {
  const other = new PglitePrepared(db);
  await db.exec("TRUNCATE echoed");
  await other.run(INSERT, [["other"], ["0"], ["x"], ["1"]]);
  await pglitePreparedOf(db).run(INSERT, [["mine"], ["0"], ["y"], ["2"]]);
  const rows = await db.query("SELECT via, value FROM echoed ORDER BY via");
  assert.deepEqual(rows, [
    { via: "mine", value: "y" },
    { via: "other", value: "x" },
  ]);
});

test("a failing statement fails with the database's own error, and nothing of it is written", async () => {
  await db.exec("TRUNCATE echoed");
  await assert.rejects(
    pglitePreparedOf(db).run(INSERT, [["bad"], ["0", "1"], ["fine", "also fine"], ["1", "not a number"]]),
    (error: { code?: string }) => error.code === "22P02",
  );
  assert.deepEqual(await db.query("SELECT * FROM echoed"), []);
});

test("the embedded database only", () => {
  assert.throws(() => new PglitePrepared({ ...db, kind: "postgres" }), /embedded database only/);
});
