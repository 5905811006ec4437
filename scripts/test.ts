// Runs the test suite, or one lane of it, with node's test runner:
//
//   npm test                  every lane (what CI runs)
//   npm run test:unit         the code alone: no database, no chain, no child process
//   npm run test:integration  the service's parts against PGlite or PostgreSQL, anvil and the real EntryPoint
//   npm run test:e2e          the service as a whole: Alto bundling our operations, the service as its own process
//
// The runner gives each file its own process. Its default concurrency (one file less than the cores) leaves a
// 2-core machine running one file at a time, while most files spend their time waiting for anvil, Alto or a socket;
// TEST_CONCURRENCY sets another number.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { availableParallelism } from "node:os";

const LANES = ["unit", "integration", "e2e"] as const;
type Lane = (typeof LANES)[number];

/** Files that need nothing but the code (and at most a local HTTP server): no database, chain, bundler or service. */
const UNIT = new Set([
  "test/architecture/imports.test.ts",
  "test/chain/artifacts.test.ts",
  "test/chain/contractBuild.test.ts",
  "test/chain/fixedLayoutHashes.test.ts",
  "test/chain/fixedLayoutHashesV07.test.ts",
  "test/chain/localAddresses.test.ts",
  "test/chain/paymasterAndData.test.ts",
  "test/chain/paymasterAndDataV07.test.ts",
  "test/chain/signer.test.ts",
  "test/chain/signerKey.test.ts",
  "test/chain/sponsoringChains.test.ts",
  "test/chain/tokenArtifacts.test.ts",
  "test/chain/tokenPaymasterAndData.test.ts",
  "test/chain/tokenPaymasterAndDataV07.test.ts",
  "test/config.test.ts",
  "test/dashboard/helpers.test.ts",
  "test/docs.test.ts",
  "test/rpc/mode.test.ts",
  "test/settlement/operationLogs.test.ts",
  "test/rpc/params.test.ts",
  "test/schemas/userOperationV07.test.ts",
  "test/schemas/problem.test.ts",
  "test/sponsorship/calendarCycles.test.ts",
  "test/sponsorship/callData.test.ts",
  "test/sponsorship/contractAbi.test.ts",
  "test/sponsorship/decide.test.ts",
  "test/sponsorship/eligibility.test.ts",
  "test/sponsorship/erc7579.test.ts",
  "test/sponsorship/maxCostPerOp.test.ts",
  "test/sponsorship/operationView.test.ts",
  "test/sponsorship/rules.test.ts",
  "test/sponsorship/rulesV07.test.ts",
  "test/sponsorship/senderLists.test.ts",
  "test/sponsorship/setupCache.test.ts",
  "test/sponsorship/spendingLimitCycle.test.ts",
  "test/sponsorship/usdAmount.test.ts",
  "test/sponsorship/timeWindow.test.ts",
  "test/sponsorship/webhookRule.test.ts",
  "test/tokens/tokenConfig.test.ts",
  "test/webhooks/addressGuard.test.ts",
  "test/webhooks/call.test.ts",
  "test/webhooks/settings.test.ts",
]);

/** Folders whose files run the service whole: with Alto, or as the process an operator starts. */
const E2E_FOLDERS = ["test/e2e/", "test/service/"];

/** A file's lane; a file not listed anywhere is an integration test, so that every file runs in some lane. */
function laneOf(file: string): Lane {
  if (UNIT.has(file)) return "unit";
  if (E2E_FOLDERS.some((folder) => file.startsWith(folder))) return "e2e";
  return "integration";
}

const requested = process.argv[2] ?? "all";
if (requested !== "all" && !LANES.includes(requested as Lane)) {
  console.error(`unknown lane "${requested}": one of all, ${LANES.join(", ")}`);
  process.exit(2);
}

const files = readdirSync("test", { recursive: true, encoding: "utf8" })
  .filter((name) => name.endsWith(".test.ts"))
  .map((name) => `test/${name.split("\\").join("/")}`)
  .sort();
// The slow lanes start first, so that the quick files fill the gaps at the end instead of an e2e file running alone.
const selected = (["e2e", "integration", "unit"] as const)
  .filter((lane) => requested === "all" || lane === requested)
  .flatMap((lane) => files.filter((file) => laneOf(file) === lane));

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
