// Runs the test suite, or one lane of it, with node's test runner:
//
//   npm test                  every lane (what CI runs)
//   npm run test:unit         the code alone: no database, no chain, no child process
//   npm run test:integration  the service's parts against PGlite or PostgreSQL, anvil and the real EntryPoint
//   npm run test:e2e          the service as a whole: Alto bundling our operations, the service as its own process
//   npm run test:database     the files whose outcome depends on the database, from every lane (CI's PostgreSQL pass)
//
// The runner gives each file it is handed its own process. It is handed bundles of files (scripts/testBundles.ts), so
// that a process's start-up is paid once for several files. Its default concurrency (one process less than the cores)
// leaves a 2-core machine running one bundle at a time, while most files spend their time waiting for anvil, Alto or a
// socket: so three at the least. TEST_CONCURRENCY sets another number (CI runs four, beside the PostgreSQL selection's
// two: .ci/run), and TEST_CPU_LOG a file where each bundle logs the CPU of each of its files (scripts/testBundles.ts).
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { groupIntoBundles, writeBundles } from "./testBundles";
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
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(3, availableParallelism() - 1));
// The slow lanes start first, so that the quick bundles fill the gaps at the end instead of an e2e bundle running alone.
const groups = (["e2e", "integration", "unit"] as const).flatMap((lane) =>
  groupIntoBundles(
    files.filter((file) => laneOf(file) === lane && wanted(file, lane)),
    lane,
    concurrency,
  ),
);
const bundles = writeBundles(groups);

// Node's own choice of report (spec on a terminal, TAP elsewhere), then a list of the failures at the very end.
const reporters = [
  `--test-reporter=${process.stdout.isTTY ? "spec" : "tap"}`,
  "--test-reporter-destination=stdout",
  "--test-reporter=./scripts/failureSummary.mjs",
  "--test-reporter-destination=stdout",
];
const run = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...reporters, ...bundles.paths],
  { stdio: "inherit" },
);
bundles.remove();
process.exit(run.status ?? 1);
