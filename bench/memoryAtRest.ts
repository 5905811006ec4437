// Benchmark: the service's resident memory at rest, on the embedded default (PGlite, no local chain), under this
// process's Node and under another Node executable, turn about in one run.
//   npx tsx bench/memoryAtRest.ts --node .ci/runtime/node-26.12.1/bin/node [--starts N] [--settle-seconds N]
// Each start waits until the service listens, then lets it settle (the start's garbage collected) and reads VmRSS.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { embeddedEnv, startService } from "../test/helpers/service";

const { values } = parseArgs({
  options: {
    node: { type: "string" },
    starts: { type: "string", default: "3" },
    "settle-seconds": { type: "string", default: "10" },
  },
});
const runtimes = [process.execPath, ...(values.node ? [path.resolve(values.node)] : [])];
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
const figures = new Map(runtimes.map((node) => [node, [] as number[]]));
for (let start = 0; start < Number(values.starts); start++) {
  for (const node of start % 2 === 0 ? runtimes : [...runtimes].reverse()) {
    const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-memory-"));
    const running = await startService(embeddedEnv(dataDir), undefined, {
      args: ["--import", "tsx", "src/main.ts"],
      cwd: path.resolve(import.meta.dirname, ".."),
      node,
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, Number(values["settle-seconds"]) * 1000));
      figures.get(node)?.push(rss(running.process.pid as number));
    } finally {
      await running.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
}
for (const [node, megabytes] of figures) {
  const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
  const sorted = [...megabytes].sort((a, b) => a - b);
  console.log(
    `Node ${version}: RSS at rest ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0)} MB median ` +
      `(${sorted.map((m) => m.toFixed(0)).join(", ")})`,
  );
}
