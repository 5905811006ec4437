// A PostgreSQL database of its own for a service started as a child process that a test kills mid-write: created
// beside DATABASE_URL's, migrated, and dropped at the end (FORCE: a killed service may leave connections behind).
import { type Database, openDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrations";

/**
 * Creates and migrates the database; its drop (and its clients' close) go on `cleanups`. Returns its URL, for the
 * service, and the test's own client of it.
 */
export async function migratedServiceDatabase(
  url: string,
  prefix: string,
  cleanups: (() => Promise<void> | void)[],
): Promise<{ url: string; db: Database }> {
  const admin = await openDatabase({ url });
  const name = `${prefix}_${process.pid}_${Date.now()}`;
  await admin.exec(`CREATE DATABASE ${name}`);
  cleanups.push(async () => {
    await admin.exec(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.close();
  });
  const target = new URL(url);
  target.pathname = `/${name}`;
  const db = await openDatabase({ url: target.toString() });
  cleanups.push(() => db.close());
  await migrate(db);
  return { url: target.toString(), db };
}
