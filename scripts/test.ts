// Runs the test suite, or one lane of it, with node's test runner:
//
//   npm test                  every lane (what CI runs)
//   npm run test:unit         the code alone: no database, no chain, no child process
//   npm run test:integration  the service's parts against PGlite or PostgreSQL, anvil and the real EntryPoint
//   npm run test:e2e          the service as a whole: Alto bundling our operations, the service as its own process
//   npm run test:database     the files whose outcome depends on the database, from every lane (CI's PostgreSQL pass)
//
// The runner gives each file its own process. Its default concurrency (one file less than the cores) leaves a
// 2-core machine running one file at a time, while most files spend their time waiting for anvil, Alto or a socket;
// TEST_CONCURRENCY sets another number.
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { dependsOnDatabase, LANES, type Lane, laneOf, testFiles } from "./testLanes";

// "database" is not a lane of its own: it picks, from every lane, the files whose outcome depends on the database,
// which CI runs a second time against PostgreSQL (scripts/testLanes.ts).
const SELECTIONS = ["all", ...LANES, "database"] as const;
type Selection = (typeof SELECTIONS)[number];

const requested = (process.argv[2] ?? "all") as Selection;
if (!SELECTIONS.includes(requested)) {
  console.error(`unknown lane "${requested}": one of ${SELECTIONS.join(", ")}`);
  process.exit(2);
}

function wanted(file: string, lane: Lane): boolean {
  if (requested === "all") return true;
  if (requested === "database") return dependsOnDatabase(file);
  return lane === requested;
}

const files = testFiles();
// The slow lanes start first, so that the quick files fill the gaps at the end instead of an e2e file running alone.
const selected = (["e2e", "integration", "unit"] as const).flatMap((lane) =>
  files.filter((file) => laneOf(file) === lane && wanted(file, lane)),
);

const concurrency = process.env.TEST_CONCURRENCY ?? String(Math.max(3, availableParallelism() - 1));
// Node's own choice of report (spec on a terminal, TAP elsewhere), then a list of the failures at the very end.
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
  "--test-reporter-destination=stdout",
  "--test-reporter=./scripts/failureSummary.mjs",
  "--test-reporter-destination=stdout",
];
const run = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...reporters, ...selected],
  { stdio: "inherit" },
);
process.exit(run.status ?? 1);
