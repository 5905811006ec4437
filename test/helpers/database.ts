import { randomBytes } from "node:crypto";
import { type Database, openDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrations";
import { openPgliteFromSnapshot } from "./pgliteSnapshot";

/**
 * This process's environment, for a child that inherits it (PATH, HOME, the suite's DATABASE_URL). It lives here
 * because the child then runs on the suite's database: a test that uses it is in the database selection
 * (scripts/testLanes.ts).
 */
export function inheritedEnv(): NodeJS.ProcessEnv {
  return { ...process.env };
}

/** The PostgreSQL of the suite's second pass (DATABASE_URL), or undefined on the PGlite pass. */
export function testDatabaseUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined;
}

/**
 * A fresh, migrated database for one test file: in-memory PGlite by default (started from a migrated snapshot, which
 * costs a third of a new instance's CPU), or a schema of its own in the PostgreSQL that DATABASE_URL names (dropped
 * again on close), so runs and files never see each other's rows.
 */
export async function openTestDatabase(): Promise<Database> {
  const url = testDatabaseUrl();
  if (!url) return openPgliteFromSnapshot();
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE SCHEMA ${schema}`);
  const db = await openDatabase({ url, schema });
  await migrate(db);
  return {
    ...db,
    async close() {
      await db.close();
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}

/** Two instances' databases: on PostgreSQL two connection pools on one schema, as two services share one database. */
export interface TwoInstanceDatabases {
  first: Database;
  /** On PGlite the same database as `first`: one process holds it, so both instances share it. */
  second: Database;
  close(): Promise<void>;
}

/** A fresh, migrated database reached by two instances, for what one instance must learn of another's writes. */
export async function openTwoInstanceDatabases(): Promise<TwoInstanceDatabases> {
  const url = testDatabaseUrl();
  if (!url) {
    const db = await openTestDatabase();
    return { first: db, second: db, close: () => db.close() };
  }
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE SCHEMA ${schema}`);
  const first = await openDatabase({ url, schema });
  const second = await openDatabase({ url, schema });
  await migrate(first);
  return {
    first,
    second,
    async close() {
      await Promise.all([first.close(), second.close()]);
      await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
      await admin.close();
    },
  };
}
