// The ambient transaction of the management writes (src/storage/ambientTransaction.ts) switches its AsyncLocalStorage
// off whenever no run is open, so that sponsorships pay no promise hooks. These pin what that must not change: a run
// that ends leaves another run still open in its own transaction, and a run after the switch-off joins its own again.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { AmbientTransactions } from "../../src/storage/ambientTransaction";
import type { Database } from "../../src/storage/database";
import { openTestDatabase } from "../helpers/database";

let db: Database;
let ambient: AmbientTransactions;
before(async () => {
  db = await openTestDatabase();
  await db.exec("CREATE TABLE ambient_probe (label text NOT NULL)");
  ambient = new AmbientTransactions(db);
});
after(() => db.close());

const labels = async () =>
  (await db.query<{ label: string }>("SELECT label FROM ambient_probe ORDER BY label")).map((row) => row.label);

/** A run that writes `label` through the ambient database, then fails: only a write inside the run is rolled back. */
const rolledBack = (label: string, before: () => Promise<unknown> = async () => {}) =>
  ambient
    .run(async () => {
      await before();
      await ambient.database.query("INSERT INTO ambient_probe (label) VALUES ($1)", [label]);
      throw new Error("roll back");
    })
    .then(
      () => assert.fail("the run should have failed"),
      (error: Error) => assert.equal(error.message, "roll back"),
    );

test("a run after an earlier one ended writes in its own transaction again", async () => {
  await ambient.run(async () => ambient.database.query("INSERT INTO ambient_probe (label) VALUES ('kept')"));
  await rolledBack("after");
  assert.deepEqual(await labels(), ["kept"]);
  await db.exec("DELETE FROM ambient_probe");
});

test("a run that ends while another is open leaves the other's writes in the other's transaction", async () => {
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  let secondStarted = () => {};
  const started = new Promise<void>((resolve) => {
    secondStarted = resolve;
  });
  const first = ambient.run(async () => {
    await ambient.database.query("INSERT INTO ambient_probe (label) VALUES ('first')");
    await gate;
  });
  // The second writes only once the first has ended (and with it, the first's part of the storage).
  const second = rolledBack("second", async () => {
    secondStarted();
    await first;
  });
  // PostgreSQL runs both transactions at once: the second is open before the first ends. PGlite runs one transaction
  // at a time, so there the second starts after the first; waiting for it would never end.
  if (db.kind === "postgres") await started;
  openGate();
  await Promise.all([first, second]);
  assert.deepEqual(await labels(), ["first"]);
  await db.exec("DELETE FROM ambient_probe");
});
