// The selection CI runs against PostgreSQL (scripts/testLanes.ts): derived from the imports, so that a new test file
// that opens the database cannot drop out of it unnoticed, and a file only leaves it with a reason.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import {
  DATABASE_HELPER,
  dependsOnDatabase,
  laneOf,
  NOT_DATABASE,
  reachesDatabase,
  testFiles,
  UNIT,
} from "../scripts/testLanes";

const ROOT = path.resolve(import.meta.dirname, "..");
const files = testFiles();
// Built from pieces so that this file does not count as a reader of the environment itself.
const ENVIRONMENT = ["process", "env"].join(".");

test("a file reaches the database helper through its imports, directly or through other helpers", () => {
  // Directly, through startTestApp (app.ts), and two helpers deep (chainApp.ts → app.ts → database.ts).
  assert.equal(reachesDatabase("test/storage/alerts.test.ts"), true);
  assert.equal(reachesDatabase("test/http/paymasters.test.ts"), true);
  assert.equal(reachesDatabase("test/rpc/erc7677.test.ts"), true);
  // A child process given the suite's environment runs on the suite's database too: inheritedEnv lives beside it.
  assert.equal(reachesDatabase("test/service/concurrency.test.ts"), true);
  // PGlite's own behaviour, and contracts on anvil: never PostgreSQL.
  assert.equal(reachesDatabase("test/storage/pgliteCluster.test.ts"), false);
  assert.equal(reachesDatabase("test/contracts/verifyingPaymaster.test.ts"), false);
});

test("the database selection holds every file that opens the database, less the ones listed with a reason", () => {
  const selected = files.filter(dependsOnDatabase);
  const opening = files.filter(reachesDatabase);
  assert.deepEqual(
    selected,
    opening.filter((file) => !NOT_DATABASE.has(file)),
  );
  // Storage, limits, concurrency, crash and the management API's conformance stay in it.
  for (const file of [
    "test/storage/reserveLimits.test.ts",
    "test/sponsorship/limitAndDepositRules.test.ts",
    "test/rpc/spendingLimits.test.ts",
    "test/service/concurrency.test.ts",
    "test/service/crash.test.ts",
    "test/http/answersMatchDocument.test.ts",
  ]) {
    assert.ok(selected.includes(file), `${file} runs against PostgreSQL`);
  }
});

test("every file NOT_DATABASE names exists, opens the database (else the entry is stale) and has a reason", () => {
  for (const [file, reason] of NOT_DATABASE) {
    assert.ok(files.includes(file), `${file} is listed in NOT_DATABASE but is not a test file`);
    assert.ok(reachesDatabase(file), `${file} no longer opens the database: remove it from NOT_DATABASE`);
    assert.ok(reason.length > 20, `${file}: say why its outcome does not depend on the database`);
  }
});

test("unit files open no database, and every UNIT entry is a test file", () => {
  for (const file of UNIT) {
    assert.ok(files.includes(file), `${file} is listed in UNIT but is not a test file`);
    assert.equal(laneOf(file), "unit");
    assert.equal(reachesDatabase(file), false, `${file} opens the database: it is not a unit test`);
  }
});

test("only the database helper hands DATABASE_URL to a test: no other test file reads the environment unlisted", () => {
  // Readers of the environment under test/ and what each reads; a new one must not pass the suite's DATABASE_URL on
  // outside test/helpers/database.ts, or the file using it would run on PostgreSQL without being selected.
  const readers = new Map([
    [DATABASE_HELPER, "DATABASE_URL, and the whole environment for a child (inheritedEnv)"],
    ["test/helpers/service.ts", "embeddedEnv: the environment without DATABASE_URL"],
    ["test/helpers/app.ts", "TEST_LOG"],
    ["test/helpers/browser.ts", "CHROMIUM_PATH"],
    ["test/helpers/softHsm.ts", "PATH for SoftHSM2's tools, and sets SOFTHSM2_CONF (the module's own setting)"],
  ]);
  const found = everyTestSource().filter((file) => readFileSync(path.join(ROOT, file), "utf8").includes(ENVIRONMENT));
  assert.deepEqual(found.sort(), [...readers.keys()].sort());
  assert.match(readFileSync(path.join(ROOT, "test/helpers/service.ts"), "utf8"), /delete env\.DATABASE_URL;/);
});

/** Every TypeScript file under test/, test files and helpers alike. */
function everyTestSource(): string[] {
  return readdirSync(path.join(ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `test/${name.split(path.sep).join("/")}`);
}
