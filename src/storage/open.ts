import type { Config } from "../config";
import { type Database, openDatabase } from "./database";
import { type FolderOwner, pgliteFolder, takeDataFolder } from "./dataFolder";
import { migrate } from "./migrations";
import { makeFolderPrivate } from "./privateFolder";

export interface Storage {
  db: Database;
  /** Embedded only: the hold on the data folder, to record where the service listens and to let go at the end. */
  folder?: ReturnType<typeof takeDataFolder>;
  close(): Promise<void>;
}

/** Opens PostgreSQL when DATABASE_URL is set, else the embedded PGlite in the data folder, and migrates it. */
export async function openStorage(
  config: Pick<Config, "databaseUrl" | "dataDir">,
  role: FolderOwner["role"],
): Promise<Storage> {
  if (config.databaseUrl) {
    const db = await openDatabase({ url: config.databaseUrl });
    await migrate(db);
    return { db, close: () => db.close() };
  }
  // What the service and PGlite create from now on is private (files 0600, folders 0700), not 0644/0755.
  process.umask(0o077);
  makeFolderPrivate(config.dataDir);
  const folder = takeDataFolder(config.dataDir, role);
  try {
    const db = await openDatabase({ dataDir: pgliteFolder(config.dataDir) });
    await migrate(db);
    // What existed before (files of an earlier version, a restored backup) is tightened too.
    makeFolderPrivate(config.dataDir);
    return {
      db,
      folder,
      async close() {
        await db.close();
        folder.release();
      },
    };
  } catch (error) {
    folder.release();
    throw error;
  }
}
