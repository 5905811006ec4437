import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * What tells one process from a later one that got the same pid: on Linux the start time in clock ticks since boot
 * (field 22 of /proc/<pid>/stat) with the boot's id; elsewhere the start time `ps` reports (to the second). Undefined
 * when the process does not exist (or has ended and waits to be reaped) or nothing can tell.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself: count after the last.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z") return undefined;
    return `${bootId()}:${fields[19]}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && isLinux()) return undefined;
  }
  try {
    const started = execFileSync("ps", ["-o", "lstart=", "-p", String(pid)], { encoding: "utf8", timeout: 2_000 });
    return started.trim() || undefined;
  } catch {
    return undefined;
  }
}

const isLinux = () => process.platform === "linux";

let cachedBootId: string | undefined;
function bootId(): string {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      cachedBootId = "";
    }
  }
  return cachedBootId;
}

/** Signal 0 reaches it: it exists (EPERM: it exists, and belongs to another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
