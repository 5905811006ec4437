import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { type Database, pgliteDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrations";

// A new PGlite runs initdb (about 3 s of CPU); loading the data folder of an already migrated one takes a third of
// that. The snapshot is made once and kept under node_modules/.cache, named by what decides its content: the
// migrations' source and PGlite's version, so a changed migration or PGlite upgrade makes a new one.
const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
const migrationsSource = join(root, "src/storage/migrations.ts");
const pgliteManifest = join(root, "node_modules/@electric-sql/pglite/package.json");

function snapshotPath(): string {
  const hash = createHash("sha256")
    .update(readFileSync(migrationsSource))
    .update(readFileSync(pgliteManifest))
    .digest("hex")
    .slice(0, 16);
  return join(root, "node_modules/.cache/paymaster-tests", `pglite-migrated-${hash}.tar`);
}

let snapshot: Promise<Blob> | undefined;

/** A started in-memory PGlite holding the migrated, empty schema. */
export async function openPgliteFromSnapshot(): Promise<Database> {
  snapshot ??= loadOrMakeSnapshot();
  const pglite = new PGlite({ loadDataDir: await snapshot });
  await pglite.waitReady;
  const db = pgliteDatabase(pglite);
  // Nothing to do unless the snapshot misses a migration; then it is applied here rather than trusted blindly.
  await migrate(db);
  return db;
}

async function loadOrMakeSnapshot(): Promise<Blob> {
  const path = snapshotPath();
  try {
    return new Blob([readFileSync(path)]);
  } catch {
    // Not made yet: this process makes it. Parallel test files may race here; each writes a whole file and renames it
    // into place, so a reader never sees half of one.
  }
  const pglite = new PGlite();
  await pglite.waitReady;
  await migrate(pgliteDatabase(pglite));
  const dump = await pglite.dumpDataDir("none");
  await pglite.close();
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, path);
  return dump;
}
