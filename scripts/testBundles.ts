// Groups test files into bundles: one test process runs several files, each as a suite named by its path.
//
// Node 20's runner starts a process per file, and each pays its start-up again: tsx, viem, Fastify, PGlite's wasm and
// the migrated snapshot, about 4 to 5 s of CPU for a file that builds the app (docs/testing.md, 'Test processes').
// With ~140 files that start-up was a third of the suite's CPU. A bundle pays it once for its files.
//
// Each file is imported inside a describe() of its own, so its top-level before/after hooks stay scoped to it (its
// anvil or database is closed when its last test ends, not when the bundle ends) and the report names the file.
// Files in one bundle run one after another, as the tests within a file already do; bundles run side by side.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Lane } from "./testLanes";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Files per bundle by lane. Unit files are CPU-bound and quick: one bundle per worker. Integration files mostly wait on
 * anvil and sockets, and each bundle pays a process's start (about 1.7 s of CPU on Node 26, 2.5 s on Node 20: node with
 * tsx, the service's modules, PGlite's WebAssembly): bundles of eight pay it half as often as bundles of four did,
 * and still leave a dozen or more bundles for the workers to share, so a short one fills the gap a long one leaves.
 * E2E files spend minutes in Alto and child services, where start-up hardly counts: two per bundle.
 */
function bundleSize(lane: Lane, files: number, workers: number): number {
  if (lane === "unit") return Math.max(1, Math.ceil(files / workers));
  if (lane === "integration") return 8;
  return 2;
}

/**
 * The bundles' source: one describe per file, named by its path from the repository's root. Each file is imported only
 * once the one before it has ended: describe() starts its callback at once, and two imports in flight that share a
 * module with top-level await (the service, through its helpers) evaluate in either's context, so one file's tests
 * would be counted in the other's suite and its hooks run there. A top-level describe's promise settles once its
 * suite has run (Node 20 to 26): awaited too, it keeps the next file's import out of the CPU counted for this one.
 *
 * With TEST_CPU_LOG naming a file, each bundle appends to it one JSON line per test file, with the CPU from its import
 * to its last after hook, counting the children it started and reaped (anvil, Alto, a service), read from
 * /proc/self/stat; and one line for the process's own start before the first import. That is how docs/testing.md's
 * per-file figures are measured: CPU, which what else runs on the machine changes far less than the wall clock.
 */
export function bundleSource(files: readonly string[]): string {
  const entries = files.map(
    (file) => `  [${JSON.stringify(file)}, ${JSON.stringify(pathToFileURL(path.resolve(ROOT, file)).href)}],\n`,
  );
  return [
    "// Written by scripts/testBundles.ts for one run of the suite.",
    'import { appendFileSync, readFileSync } from "node:fs";',
    'import { describe } from "node:test";',
    "",
    "const cpuLog = process.env.TEST_CPU_LOG;",
    "// User and system time of this process and of its reaped children (fields 14 to 17), in ms at 100 ticks a second.",
    "const cpuMs = () =>",
    '  readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ").slice(11, 15).reduce((sum, ticks) => sum + ticks * 10, 0);',
    'const logCpu = (file, ms) => appendFileSync(cpuLog, JSON.stringify({ file, pid: process.pid, cpuMs: ms }) + "\\n");',
    "let counted = cpuLog ? cpuMs() : 0;",
    'if (cpuLog) logCpu("(process start)", counted);',
    "",
    `const files = [\n${entries.join("")}];`,
    "for (const [name, url] of files) {",
    "  let loaded;",
    "  const imported = new Promise((resolve) => (loaded = resolve));",
    "  const suite = describe(name, async () => {",
    "    try {",
    "      await import(url);",
    "    } finally {",
    "      loaded();",
    "    }",
    "  });",
    "  await Promise.all([imported, suite]);",
    "  if (cpuLog) {",
    "    const now = cpuMs();",
    "    logCpu(name, now - counted);",
    "    counted = now;",
    "  }",
    "}",
    "",
  ].join("\n");
}

/** Splits `files` into bundles of the lane's size, each file staying in the order given; unit files are dealt round. */
export function groupIntoBundles(files: readonly string[], lane: Lane, workers: number): string[][] {
  const size = bundleSize(lane, files.length, workers);
  const count = Math.ceil(files.length / size);
  const bundles: string[][] = Array.from({ length: count }, () => []);
  files.forEach((file, index) => {
    // Dealt round rather than cut in runs, so that the slow unit files (the compiler, the import graph) spread out.
    const bundle = lane === "unit" ? index % count : Math.floor(index / size);
    bundles[bundle]?.push(file);
  });
  return bundles;
}

export interface WrittenBundles {
  paths: string[];
  /** Deletes the bundles' folder; call when the run has ended. */
  remove(): void;
}

/** Writes each group as a `.test.mjs` file in a fresh temporary folder, for `node --test` to run. */
export function writeBundles(groups: readonly (readonly string[])[]): WrittenBundles {
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-test-bundles-"));
  const paths = groups.map((group, index) => {
    const file = path.join(folder, `bundle-${String(index + 1).padStart(3, "0")}.test.mjs`);
    writeFileSync(file, bundleSource(group));
    return file;
  });
  return { paths, remove: () => rmSync(folder, { recursive: true, force: true }) };
}

/**
 * The environment for a test runner started from inside a test: without NODE_TEST_CONTEXT, which would make it report
 * to the runner above instead of running on its own, and without TEST_CPU_LOG, so that its files are not counted as
 * the suite's. It holds no database setting a throwaway file could use.
 */
export function standaloneRunnerEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, DATABASE_URL: __, TEST_CPU_LOG: ___, ...env } = process.env;
  return env;
}
