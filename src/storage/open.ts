import type { Config } from "../config";
import { type Database, openDatabase } from "./database";
import { type FolderOwner, pgliteFolder, takeDataFolder } from "./dataFolder";
import { migrate } from "./migrations";

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
  const folder = takeDataFolder(config.dataDir, role);
  try {
    const db = await openDatabase({ dataDir: pgliteFolder(config.dataDir) });
    await migrate(db);
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
