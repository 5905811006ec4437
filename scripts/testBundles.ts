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
 * anvil and sockets: bundles of a few keep several running side by side and let a short bundle fill the gap a long one
 * leaves. E2E files spend minutes in Alto and child services, where start-up hardly counts: two per bundle.
 */
function bundleSize(lane: Lane, files: number, workers: number): number {
  if (lane === "unit") return Math.max(1, Math.ceil(files / workers));
  if (lane === "integration") return 4;
  return 2;
}

/** The bundles' source: one describe per file, named by its path from the repository's root. */
export function bundleSource(files: readonly string[]): string {
  const suites = files.map(
    (file) =>
      `describe(${JSON.stringify(file)}, async () => {\n  await import(${JSON.stringify(pathToFileURL(path.resolve(ROOT, file)).href)});\n});\n`,
  );
  return `// Written by scripts/testBundles.ts for one run of the suite.\nimport { describe } from "node:test";\n\n${suites.join("")}`;
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
 * to the runner above instead of running on its own. It holds no database setting a throwaway file could use.
 */
export function standaloneRunnerEnv(): NodeJS.ProcessEnv {
  const { NODE_TEST_CONTEXT: _, DATABASE_URL: __, ...env } = process.env;
  return env;
}
