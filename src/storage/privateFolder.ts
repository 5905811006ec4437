import { chmodSync, lstatSync, mkdirSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";

/** The data folder holds accounts, funding wallets, limits and keys: only the service's own user may read it. */
const PRIVATE_FOLDER_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;

export class DataFolderPermissionError extends Error {
  override name = "DataFolderPermissionError";
}

/**
 * Creates the folder if needed and makes it and everything in it private: folders 0700, files 0600, whatever they
 * were (a mounted volume, a `mkdir data`, files PGlite created with the default 0666 less the umask). Symbolic links
 * inside are left alone, never followed (the folder itself may be one). Throws, naming the path, when one cannot be changed (owned by another user, a
 * read-only mount): the service does not run on data others can read or edit.
 */
export function makeFolderPrivate(folder: string): void {
  mkdirSync(folder, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  // DATA_DIR itself may be a link to the volume: that folder is the one to make private.
  tighten(realpathSync(folder));
}

function tighten(entry: string): void {
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(entry);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return; // removed meanwhile (a temporary file)
    throw refused(entry, error);
  }
  if (stat.isSymbolicLink()) return;
  const wanted = stat.isDirectory() ? PRIVATE_FOLDER_MODE : PRIVATE_FILE_MODE;
  if ((stat.mode & 0o7777) !== wanted) {
    try {
      chmodSync(entry, wanted);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw refused(entry, error);
    }
  }
  if (stat.isDirectory()) for (const name of readdirSync(entry)) tighten(path.join(entry, name));
}

function refused(entry: string, error: unknown): DataFolderPermissionError {
  const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new DataFolderPermissionError(
    `cannot make ${entry} private (folders 0700, files 0600) (${code}): give the data folder to the user the service ` +
      "runs as, or choose another DATA_DIR",
  );
}
