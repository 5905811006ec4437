// Scenarios measured A/B in one run: each round runs every scenario's block of work, in alternating order, so that a
// machine whose load drifts weighs on all of them alike. Figures are this process's CPU (user + system) and the wall
// time, per unit of work.

export interface ScenarioTotals {
  cpuMicros: number;
  wallMs: number;
  count: number;
}

/**
 * Runs `block(name, count)` for every scenario: once with `warmUp` units (JIT, caches, connections; not counted), then
 * `rounds` times with `count` units each. `block` does the work it is asked; the time it spends preparing before its
 * returned function runs is not counted.
 */
export async function interleaved(
  names: readonly string[],
  block: (name: string, count: number) => Promise<() => Promise<void>>,
  options: { rounds: number; count: number; warmUp: number },
): Promise<Map<string, ScenarioTotals>> {
  const timed = async (name: string, count: number) => {
    const work = await block(name, count);
    const started = process.cpuUsage();
    const wall = performance.now();
    await work();
    const cpu = process.cpuUsage(started);
    return { cpuMicros: cpu.user + cpu.system, wallMs: performance.now() - wall };
  };
  for (const name of names) await timed(name, options.warmUp);
  const totals = new Map(names.map((name) => [name, { cpuMicros: 0, wallMs: 0, count: 0 }]));
  for (let round = 0; round < options.rounds; round++) {
    for (const name of round % 2 === 0 ? names : [...names].reverse()) {
      const { cpuMicros, wallMs } = await timed(name, options.count);
      const total = totals.get(name) as ScenarioTotals;
      total.cpuMicros += cpuMicros;
      total.wallMs += wallMs;
      total.count += options.count;
    }
  }
  return totals;
}

/** One line a scenario: CPU and wall time per unit, in µs. */
export function printTotals(totals: Map<string, ScenarioTotals>, unit: string): void {
  for (const [name, total] of totals) {
    console.log(
      `${name.padEnd(36)} ${(total.cpuMicros / total.count).toFixed(0).padStart(6)} µs CPU/${unit}, ` +
        `${((total.wallMs * 1000) / total.count).toFixed(0).padStart(7)} µs wall/${unit}`,
    );
  }
}
