// The suite runs files in bundles (scripts/testBundles.ts). These tests hold what that must not cost: every file runs
// exactly once, in its lane's bundles, and one file's hooks and failures stay its own.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

test("unit files fill one bundle per worker; integration bundles hold 4 files, e2e bundles 2", () => {
  const names = (count: number) => Array.from({ length: count }, (_, index) => `test/f${index}.test.ts`);
  assert.equal(groupIntoBundles(names(43), "unit", 3).length, 3);
  assert.equal(groupIntoBundles(names(2), "unit", 3).length, 2);
  assert.deepEqual(
    groupIntoBundles(names(9), "integration", 3).map((bundle) => bundle.length),
    [4, 4, 1],
  );
  assert.deepEqual(
    groupIntoBundles(names(5), "e2e", 3).map((bundle) => bundle.length),
    [2, 2, 1],
  );
  assert.deepEqual(groupIntoBundles([], "integration", 3), []);
});

test("in one bundle, a file's after hook runs before the next file starts, and a failure is reported under its file", () => {
  const folder = mkdtempSync(path.join(tmpdir(), "bundle-isolation-"));
  const first = path.join(folder, "first.test.mjs");
  const second = path.join(folder, "second.test.mjs");
  writeFileSync(
    first,
    `import { after, test } from "node:test";\n` +
      `after(() => { globalThis.firstClosed = true; });\n` +
      `test("first fails", () => { throw new Error("first's own failure"); });\n`,
  );
  writeFileSync(
    second,
    `import assert from "node:assert/strict";\nimport { test } from "node:test";\n` +
      `test("second sees the first file closed", () => { assert.equal(globalThis.firstClosed, true); });\n`,
  );
  const bundles = writeBundles([[first, second]]);
  try {
    const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...bundles.paths], {
      encoding: "utf8",
      env: standaloneRunnerEnv(),
    });
    assert.equal(run.status, 1, "the bundle fails because the first file does");
    assert.match(run.stdout, /not ok \d+ - first fails/);
    assert.match(run.stdout, /ok \d+ - second sees the first file closed/);
    assert.doesNotMatch(run.stdout, /not ok \d+ - second sees/);
    // Each file is a suite named by its path, so the report says where a failure belongs.
    assert.match(run.stdout, new RegExp(`not ok \\d+ - ${first.replaceAll(/[/.]/g, (c) => `\\${c}`)}`));
  } finally {
    bundles.remove();
    rmSync(folder, { recursive: true, force: true });
  }
});
