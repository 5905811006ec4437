import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isAlive, processStartTime } from "./processIdentity";

/**
 * The embedded database's data folder. PGlite lets one process open it at a time, so whoever opens it (the service
 * or the account command) first takes `owner.lock`; the service also writes where it listens, so the account
 * command can ask it instead of opening the folder itself.
 *
 * A lock must never outlive its holder, yet a process killed with SIGKILL leaves its file behind, and its pid comes
 * back: in a container the service is pid 1 at every start, and elsewhere any unrelated process may get it. So the
 * lock records the holder's start time as well (see processIdentity), and counts only while a process with that pid
 * AND that start time exists, and is not this process (which has not taken it yet).
 */
export interface FolderOwner {
  pid: number;
  /** processStartTime of the holder when it took the lock. */
  startTime?: string;
  role: "service" | "cli";
  host?: string;
  port?: number;
}

export class DataFolderBusyError extends Error {
  override name = "DataFolderBusyError";
}

const lockFile = (dataDir: string) => path.join(dataDir, "owner.lock");
export const pgliteFolder = (dataDir: string) => path.join(dataDir, "pglite");

/** Folders this process holds: a second take in the same process is refused like any other. */
const heldHere = new Set<string>();

function readLock(file: string): { raw: string; owner?: FolderOwner } | undefined {
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  try {
    const owner = JSON.parse(raw) as FolderOwner;
    return typeof owner.pid === "number" ? { raw, owner } : { raw };
  } catch {
    return { raw }; // unreadable: not a holder
  }
}

/** Whether `owner` is a process that runs now: same pid and same start time, never this process. */
function isLiveHolder(owner: FolderOwner): boolean {
  if (owner.pid === process.pid) return false;
  if (!isAlive(owner.pid)) return false;
  const startTime = processStartTime(owner.pid);
  // A lock without a start time was written by an earlier version: its pid alone has to do.
  if (owner.startTime === undefined || startTime === undefined) return true;
  return startTime === owner.startTime;
}

/** The live process that holds the folder, if any; a lock left by a dead process does not count. */
export function folderOwner(dataDir: string): FolderOwner | undefined {
  const owner = readLock(lockFile(dataDir))?.owner;
  return owner && isLiveHolder(owner) ? owner : undefined;
}

/** Writes in full under a temporary name first: a reader never sees half a lock. */
function writeTemporary(file: string, owner: FolderOwner): string {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(temporary, JSON.stringify(owner), { mode: 0o600 });
  return temporary;
}

/**
 * Takes the folder for this process, or throws when another live process holds it. Returns the release.
 *
 * The lock file appears whole and only if absent (a hard link of a written file). A stale one is moved aside under a
 * name of our own before it is removed, then compared with what was judged stale: if another starter replaced it
 * meanwhile, it is put back and the loop looks again, so two processes starting at once cannot both take the folder.
 */
export function takeDataFolder(
  dataDir: string,
  role: FolderOwner["role"],
): { update(o: Partial<FolderOwner>): void; release(): void } {
  const folder = path.resolve(dataDir);
  if (heldHere.has(folder)) {
    throw new DataFolderBusyError(`data folder ${dataDir} is in use by process ${process.pid} (this process)`);
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = lockFile(dataDir);
  let owner: FolderOwner = { pid: process.pid, startTime: processStartTime(process.pid), role };
  const temporary = writeTemporary(file, owner);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temporary, file);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt > 5) throw error;
      }
      const found = readLock(file);
      if (!found) continue; // removed meanwhile
      if (found.owner && isLiveHolder(found.owner)) {
        throw new DataFolderBusyError(
          `data folder ${dataDir} is in use by process ${found.owner.pid} (${found.owner.role})`,
        );
      }
      removeStale(file, found.raw);
    }
  } finally {
    rmSync(temporary, { force: true });
  }
  heldHere.add(folder);
  const isOurs = () => {
    const current = readLock(file)?.owner;
    return current?.pid === owner.pid && current.startTime === owner.startTime;
  };
  return {
    update(fields) {
      owner = { ...owner, ...fields };
      const next = writeTemporary(file, owner);
      renameSync(next, file);
    },
    release() {
      heldHere.delete(folder);
      try {
        if (isOurs()) unlinkSync(file);
      } catch {
        // already gone
      }
    },
  };
}

/** Removes the lock at `file` if it still is the stale one read as `raw`; else leaves (or puts back) what is there. */
function removeStale(file: string, raw: string): void {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.stale`;
  try {
    renameSync(file, aside);
  } catch {
    return; // removed meanwhile
  }
  if (readLock(aside)?.raw !== raw) {
    // Another starter's fresh lock: give it back, unless a third one took the place meanwhile.
    try {
      linkSync(aside, file);
    } catch {
      // a lock is there again; the next look decides
    }
  }
  rmSync(aside, { force: true });
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
