// Which test files run in which lane, and which run again against PostgreSQL (docs/testing.md, 'The database
// selection').
//
// Lanes split the files by what they need: unit (the code alone), integration (PGlite/PostgreSQL, anvil, the real
// EntryPoint), e2e (Alto, or the service as its own process). The database selection cuts across them: the files whose
// outcome depends on the database, which CI runs a second time against PostgreSQL. It is derived, not listed: a file
// that reaches test/helpers/database.ts through its imports is in it, unless NOT_DATABASE names it with the reason.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

export const LANES = ["unit", "integration", "e2e"] as const;
export type Lane = (typeof LANES)[number];

/** Files that need nothing but the code (and at most a local HTTP server): no database, chain, bundler or service. */
export const UNIT = new Set([
  "test/architecture/imports.test.ts",
  "test/architecture/versionNames.test.ts",
  "test/chain/accountCode.test.ts",
  "test/chain/accountDeploymentData.test.ts",
  "test/chain/artifacts.test.ts",
  "test/sponsorship/blockWindow.test.ts",
  "test/chain/contractBuild.test.ts",
  "test/chain/entryPointSimulationsArtifacts.test.ts",
  "test/chain/entryPointV09Deployments.test.ts",
  "test/signer/ethereumSignature.test.ts",
  "test/chain/executionGasV07.test.ts",
  "test/chain/fixedLayoutHashes.test.ts",
  "test/chain/fixedLayoutHashesV07.test.ts",
  "test/chain/l1DataGas.test.ts",
  "test/chain/localAddresses.test.ts",
  "test/chain/operationReading.test.ts",
  "test/chain/paymasterAndData.test.ts",
  "test/chain/paymasterAndDataV07.test.ts",
  "test/signer/signer.test.ts",
  "test/signer/signerKey.test.ts",
  "test/chain/sponsoringChains.test.ts",
  "test/chain/tokenArtifacts.test.ts",
  "test/chain/tokenPaymasterAndData.test.ts",
  "test/chain/permitTokenPaymasterAndData.test.ts",
  "test/chain/tokenPaymasterAndDataV07.test.ts",
  "test/chain/userOpHashV09.test.ts",
  "test/config.test.ts",
  "test/runtimeSupport.test.ts",
  "test/knownNetworks.test.ts",
  "test/dashboard/helpers.test.ts",
  "test/events/signing.test.ts",
  "test/docs.test.ts",
  "test/docsVersions.test.ts",
  "test/rpc/mode.test.ts",
  "test/rpc/tokenContext.test.ts",
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
  "test/sponsorship/maxGasPrice.test.ts",
  "test/sponsorship/rules.test.ts",
  "test/sponsorship/rulesV07.test.ts",
  "test/sponsorship/senderLists.test.ts",
  "test/sponsorship/setupCache.test.ts",
  "test/sponsorship/spendingLimitCycle.test.ts",
  "test/sponsorship/usdAmount.test.ts",
  "test/sponsorship/timeWindow.test.ts",
  "test/sponsorship/webhookRule.test.ts",
  "test/testBundles.test.ts",
  "test/testLanes.test.ts",
  "test/tokens/tokenConfig.test.ts",
  "test/webhooks/addressGuard.test.ts",
  "test/webhooks/call.test.ts",
  "test/webhooks/settings.test.ts",
]);

/** Folders whose files run the service whole: with Alto, or as the process an operator starts. */
const E2E_FOLDERS = ["test/e2e/", "test/service/"];

/** The helper that opens the suite's database: PGlite, or a schema of DATABASE_URL's PostgreSQL. */
export const DATABASE_HELPER = "test/helpers/database.ts";

/**
 * Files that open the suite's database but whose outcome does not depend on which one it is: what they check happens
 * on the chain, in a bundler, a browser or a child process that always runs the embedded PGlite, and the database only
 * keeps the dApp set-up those checks start from. Each runs on PGlite in `npm test`; its reason says why PostgreSQL
 * would add nothing. An entry that no longer reaches the database fails test/testLanes.test.ts, so the list only holds
 * files it applies to.
 */
/** What the files with a bundler check: the chain's side. Their storage side is covered where it runs on both. */
const ALTO =
  "Alto's acceptance of our signed operations on anvil; the decisions and records behind them run on PostgreSQL in " +
  "test/rpc/, their settlement in test/settlement/";

export const NOT_DATABASE: ReadonlyMap<string, string> = new Map([
  ["test/e2e/alto.test.ts", ALTO],
  ["test/e2e/erc20.test.ts", ALTO],
  ["test/e2e/erc20V07.test.ts", ALTO],
  ["test/e2e/erc7677V07.test.ts", ALTO],
  ["test/e2e/l1DataFeeArbitrum.test.ts", ALTO],
  ["test/e2e/permissionless.test.ts", ALTO],
  ["test/e2e/realNetwork.test.ts", ALTO],
  ["test/e2e/sponsoredMode.test.ts", ALTO],
  ["test/e2e/stubEligibility.test.ts", ALTO],
  ["test/e2e/walletAccounts.test.ts", ALTO],
  ["test/http/dashboard.test.ts", "the dashboard's built files and their headers, served from a folder"],
  ["test/http/openapi.test.ts", "the OpenAPI document against the routes the app registers"],
  ["test/rpc/openrpc.test.ts", "the OpenRPC document against the methods and validators of the endpoint"],
  ["test/logging/redaction.test.ts", "what the logger and the 404 message leave out of a URL"],
  [
    "test/service/slowClients.test.ts",
    "socket timeouts and the connection cap of a service that runs on the embedded PGlite",
  ],
]);

/** A file's lane; a file not listed anywhere is an integration test, so that every file runs in some lane. */
export function laneOf(file: string): Lane {
  if (UNIT.has(file)) return "unit";
  if (E2E_FOLDERS.some((folder) => file.startsWith(folder))) return "e2e";
  return "integration";
}

const ROOT = path.resolve(import.meta.dirname, "..");

/** Every test file, as a path from the repository's root with forward slashes, sorted. */
export function testFiles(): string[] {
  return readdirSync(path.join(ROOT, "test"), { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => `test/${name.split("\\").join("/")}`)
    .sort();
}

/** The test/ files a file imports (statically, dynamically or by re-export), read with TypeScript's own parser. */
function testImportsOf(file: string): string[] {
  const source = readFileSync(path.join(ROOT, file), "utf8");
  const imported = ts.preProcessFile(source, true, true).importedFiles.map((reference) => reference.fileName);
  return imported
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)))
    .map((target) => (target.endsWith(".ts") ? target : `${target}.ts`))
    .filter((target) => target.startsWith("test/") && existsSync(path.join(ROOT, target)));
}

/** True when `file` imports the database helper, directly or through other test files (helpers, fixtures). */
export function reachesDatabase(file: string): boolean {
  const seen = new Set<string>();
  const pending = [file];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next === DATABASE_HELPER) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...testImportsOf(next));
  }
  return false;
}

/** The files CI runs again against PostgreSQL: those that reach the database helper, less NOT_DATABASE. */
export function dependsOnDatabase(file: string): boolean {
  return reachesDatabase(file) && !NOT_DATABASE.has(file);
}
