// Storage turns the database's refusals that callers act on into errors of its own, by SQLSTATE, the same on PGlite
// and PostgreSQL: the layers above match those errors and never a code of the database.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Database, UniqueViolation, UnstorableText } from "../../src/storage/database";
import { openTestDatabase } from "../helpers/database";

let db: Database;
before(async () => {
  db = await openTestDatabase();
  await db.exec("CREATE TABLE notes (name text UNIQUE, data jsonb)");
});
after(() => db.close());

/** The SQLSTATE of the database's own error that storage mapped. */
const codeOf = (error: Error) => (error.cause as { code?: string } | undefined)?.code;

test("U+0000 in text (22021) or in JSON (22P05) is UnstorableText, with the database's error as its cause", async () => {
  await assert.rejects(db.query("INSERT INTO notes (name) VALUES ($1)", ["a\u0000b"]), (error: Error) => {
    assert.ok(error instanceof UnstorableText, String(error));
    assert.equal(codeOf(error), "22021");
    return true;
  });
  await assert.rejects(
    db.query("INSERT INTO notes (name, data) VALUES ($1, $2)", ["json", { note: "a\u0000b" }]),
    (error: Error) => {
      assert.ok(error instanceof UnstorableText, String(error));
      assert.equal(codeOf(error), "22P05");
      return true;
    },
  );
});

test("inside a transaction too, and the unique violation keeps its constraint's name", async () => {
  await db.query("INSERT INTO notes (name) VALUES ($1)", ["taken"]);
  await assert.rejects(
    db.transaction((tx) => tx.query("INSERT INTO notes (name) VALUES ($1)", ["nul\u0000"])),
    UnstorableText,
  );
  await assert.rejects(
    db.transaction((tx) => tx.query("INSERT INTO notes (name) VALUES ($1)", ["taken"])),
    (error: Error) => error instanceof UniqueViolation && error.constraint === "notes_name_key",
  );
});
