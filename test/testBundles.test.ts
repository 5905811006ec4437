// The suite runs files in bundles (scripts/testBundles.ts). These tests hold what that must not cost: every file runs
// exactly once, in its lane's bundles, and one file's hooks and failures stay its own.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { groupIntoBundles, standaloneRunnerEnv, writeBundles } from "../scripts/testBundles";
import { LANES, laneOf, testFiles } from "../scripts/testLanes";

test("every test file lands in exactly one bundle of its lane, in the order given", () => {
  const files = testFiles();
  for (const lane of LANES) {
    const laneFiles = files.filter((file) => laneOf(file) === lane);
    const bundles = groupIntoBundles(laneFiles, lane, 3);
    assert.deepEqual(bundles.flat().sort(), [...laneFiles].sort(), `${lane}: each file once`);
    assert.ok(
      bundles.every((bundle) => bundle.length > 0),
      `${lane}: no empty bundle`,
    );
    for (const bundle of bundles) {
      const positions = bundle.map((file) => laneFiles.indexOf(file));
      assert.deepEqual(
        positions,
        [...positions].sort((a, b) => a - b),
        `${lane}: order kept within a bundle`,
      );
    }
  }
});

test("unit files fill one bundle per worker; integration bundles hold 8 files, e2e bundles 2", () => {
  const names = (count: number) => Array.from({ length: count }, (_, index) => `test/f${index}.test.ts`);
  assert.equal(groupIntoBundles(names(43), "unit", 3).length, 3);
  assert.equal(groupIntoBundles(names(2), "unit", 3).length, 2);
  assert.deepEqual(
    groupIntoBundles(names(17), "integration", 3).map((bundle) => bundle.length),
    [8, 8, 1],
  );
  assert.deepEqual(
    groupIntoBundles(names(5), "e2e", 3).map((bundle) => bundle.length),
    [2, 2, 1],
  );
  assert.deepEqual(groupIntoBundles([], "integration", 3), []);
});

test("in one bundle, each file's tests and hooks stay in its own suite, and its after hook runs before the next file", () => {
  const folder = mkdtempSync(path.join(tmpdir(), "bundle-isolation-"));
  const first = path.join(folder, "first.test.mjs");
  const second = path.join(folder, "second.test.mjs");
  // Both import a module with top-level await, as test files do through the service: while it loads, a second file's
  // import in flight would be evaluated in the first one's suite.
  writeFileSync(path.join(folder, "slowShared.mjs"), "await new Promise((resolve) => setTimeout(resolve, 100));\n");
  writeFileSync(
    first,
    `import { after, test } from "node:test";\nimport "./slowShared.mjs";\n` +
      `after(() => { globalThis.firstClosed = true; });\n` +
      `test("first fails", () => { throw new Error("first's own failure"); });\n`,
  );
  writeFileSync(
    second,
    `import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport "./slowShared.mjs";\n` +
      `test("second sees the first file closed", () => { assert.equal(globalThis.firstClosed, true); });\n`,
  );
  const bundles = writeBundles([[first, second]]);
  try {
    const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...bundles.paths], {
      encoding: "utf8",
      env: standaloneRunnerEnv(),
    });
    assert.equal(run.status, 1, "the bundle fails because the first file does");
    // TAP lists a suite's tests indented under it, before the suite's own result line.
    const lines = run.stdout.split("\n").map((line) => line.trim());
    const suiteOf = (testLine: RegExp) => {
      const at = lines.findIndex((line) => testLine.test(line));
      assert.ok(at >= 0, `${testLine} is reported`);
      return lines.slice(at).find((line) => /^(not )?ok \d+ - \//.test(line));
    };
    assert.match(suiteOf(/^not ok \d+ - first fails$/) ?? "", /^not ok \d+ - .*first\.test\.mjs$/);
    assert.match(suiteOf(/^ok \d+ - second sees the first file closed$/) ?? "", /^ok \d+ - .*second\.test\.mjs$/);
  } finally {
    bundles.remove();
    rmSync(folder, { recursive: true, force: true });
  }
});

test("with TEST_CPU_LOG, a bundle logs the CPU of its start and of each file, the children it reaped included", {
  skip: existsSync("/proc/self/stat") ? false : "the count is read from /proc (Linux)",
}, () => {
  const folder = mkdtempSync(path.join(tmpdir(), "bundle-cpu-"));
  const busy = path.join(folder, "busy.test.mjs");
  const idle = path.join(folder, "idle.test.mjs");
  const log = path.join(folder, "cpu.log");
  // A child that runs until its own clock says 300 ms of CPU (not the wall's, which a busy machine stretches).
  writeFileSync(
    busy,
    `import { spawnSync } from "node:child_process";\nimport { test } from "node:test";\n` +
      `const burn = "const start = process.cpuUsage(); while (process.cpuUsage(start).user < 300000);";\n` +
      `test("a busy child", () => { spawnSync(process.execPath, ["-e", burn]); });\n`,
  );
  writeFileSync(idle, `import { test } from "node:test";\ntest("idle", () => {});\n`);
  const bundles = writeBundles([[busy, idle]]);
  try {
    const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...bundles.paths], {
      encoding: "utf8",
      env: { ...standaloneRunnerEnv(), TEST_CPU_LOG: log },
    });
    assert.equal(run.status, 0, run.stdout);
    const lines = readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { file: string; cpuMs: number });
    assert.deepEqual(
      lines.map((line) => line.file),
      ["(process start)", busy, idle],
    );
    assert.ok(
      lines.every((line) => Number.isInteger(line.cpuMs) && line.cpuMs >= 0),
      JSON.stringify(lines),
    );
    assert.ok((lines[1]?.cpuMs ?? 0) >= 300, `the child's CPU counts as the busy file's: ${JSON.stringify(lines)}`);
  } finally {
    bundles.remove();
    rmSync(folder, { recursive: true, force: true });
  }
});
