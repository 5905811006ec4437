// The first start's cluster, made by a child process beside the data folder and renamed into place
// (src/storage/pgliteCluster.ts), then opened by the real PGlite.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { openDatabase } from "../../src/storage/database";

const root = mkdtempSync(path.join(tmpdir(), "pglite-cluster-"));
after(() => rmSync(root, { recursive: true, force: true }));

test("a new folder gets its cluster in place, with nothing left beside it, and keeps what is written", async () => {
  const folder = path.join(root, "fresh", "pglite");
  mkdirSync(path.dirname(folder));
  const db = await openDatabase({ dataDir: folder });
  await db.exec("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)");
  await db.close();
  assert.ok(existsSync(path.join(folder, "PG_VERSION")), "a cluster in the folder");
  assert.deepEqual(readdirSync(path.dirname(folder)), ["pglite"], "no .creating folder left");

  const again = await openDatabase({ dataDir: folder });
  assert.deepEqual(await again.query("SELECT n FROM kept"), [{ n: 42 }], "reopened as a restart");
  await again.close();
});

test("what a creation cut short left beside the folder is removed, and the cluster made anew", async () => {
  const folder = path.join(root, "interrupted", "pglite");
  mkdirSync(`${folder}.creating`, { recursive: true });
  writeFileSync(path.join(`${folder}.creating`, "PG_VERSION"), "half-made");
  const db = await openDatabase({ dataDir: folder });
  assert.deepEqual(await db.query("SELECT 1 AS one"), [{ one: 1 }]);
  await db.close();
  assert.deepEqual(readdirSync(path.dirname(folder)), ["pglite"]);
});

test("a creation that fails names the folder and leaves nothing behind", async () => {
  // The folder's parent is a file: the child cannot make the cluster there.
  const parent = path.join(root, "not-a-folder");
  writeFileSync(parent, "");
  const folder = path.join(parent, "pglite");
  await assert.rejects(openDatabase({ dataDir: folder }), (error: Error) => {
    assert.match(error.message, new RegExp(`^could not create the embedded database in ${folder}: .+`));
    return true;
  });
  assert.ok(!existsSync(`${folder}.creating`));
});
