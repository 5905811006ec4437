import { readFileSync } from "node:fs";

/** Clock ticks per second of /proc's utime and stime (USER_HZ: 100 on Linux everywhere in practice). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time a process has used so far (user + system, all its threads), in microseconds, from /proc/<pid>/stat; 0 once
 * the process is gone. Read from outside, so the measured process does nothing to be measured.
 */
export function processCpuMicros(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return 0;
  }
  // The command name (field 2) may hold spaces and parentheses: count the fields after its closing one.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, so 11 and 12 after the name (0-based from field 3).
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_SECOND;
}

/** The CPU time the given processes used while `work` ran, in microseconds (processes that ended count until then). */
export async function cpuDuring<T>(
  pids: () => Promise<number[]>,
  work: () => Promise<T>,
): Promise<{ result: T; micros: number }> {
  const before = new Map((await pids()).map((pid) => [pid, processCpuMicros(pid)]));
  const result = await work();
  let micros = 0;
  for (const pid of new Set([...before.keys(), ...(await pids())])) {
    const now = processCpuMicros(pid);
    if (now > 0) micros += now - (before.get(pid) ?? 0);
  }
  return { result, micros };
}
