import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";

/**
 * The embedded database's data folder. PGlite lets one process open it at a time, so whoever opens it (the service
 * or the account command) first takes `owner.lock`; the service also writes where it listens, so the account
 * command can ask it instead of opening the folder itself.
 */
export interface FolderOwner {
  pid: number;
  role: "service" | "cli";
  host?: string;
  port?: number;
}

export class DataFolderBusyError extends Error {
  override name = "DataFolderBusyError";
}

const lockFile = (dataDir: string) => path.join(dataDir, "owner.lock");
export const pgliteFolder = (dataDir: string) => path.join(dataDir, "pglite");

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The live process that holds the folder, if any; a lock left by a dead process does not count. */
export function folderOwner(dataDir: string): FolderOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(lockFile(dataDir), "utf8")) as FolderOwner;
    return typeof owner.pid === "number" && isAlive(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the folder for this process, or throws when another live process holds it. Returns the release. */
export function takeDataFolder(
  dataDir: string,
  role: FolderOwner["role"],
): { update(o: Partial<FolderOwner>): void; release(): void } {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = lockFile(dataDir);
  let owner: FolderOwner = { pid: process.pid, role };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, "wx", 0o600);
      writeSync(fd, JSON.stringify(owner));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 2) throw error;
      const holder = folderOwner(dataDir);
      if (holder) {
        throw new DataFolderBusyError(`data folder ${dataDir} is in use by process ${holder.pid} (${holder.role})`);
      }
      unlinkSync(file); // left behind by a process that died
    }
  }
  return {
    update(fields) {
      owner = { ...owner, ...fields };
      writeFileSync(file, JSON.stringify(owner), { mode: 0o600 });
    },
    release() {
      try {
        if (folderOwner(dataDir)?.pid === process.pid) unlinkSync(file);
      } catch {
        // already gone
      }
    },
  };
}

/** The secret of the loopback admin route: made once, readable by the folder's owner only. */
export function adminSecret(dataDir: string): string {
  const existing = readAdminSecret(dataDir);
  if (existing) return existing;
  const file = path.join(dataDir, "admin-secret");
  const secret = randomBytes(32).toString("hex");
  writeFileSync(file, secret, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

export function readAdminSecret(dataDir: string): string | undefined {
  try {
    return readFileSync(path.join(dataDir, "admin-secret"), "utf8").trim();
  } catch {
    return undefined;
  }
}
