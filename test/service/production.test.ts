import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { OUR_PAYMASTERS, paymasterInitCode } from "../../src/bindings/paymasters/ourPaymasters";
import { create2Address } from "../../src/chain/create2";
import { entryPointStack } from "../../src/devChain/entryPointV07Deployments";
import { deployCreate2Batch } from "../../src/devChain/localBatch";
import { openDatabase } from "../../src/storage/database";
import { anvilKeys, startLocalChain } from "../contracts/fixtures";
import { inheritedEnv, testDatabaseUrl } from "../helpers/database";
import { type RunningService, startService } from "../helpers/service";
import { managementCall, postSponsorship, testSender } from "../helpers/serviceClient";

// The production path end to end, as an operator takes it (and as the Dockerfile does): build, pack, install the pack
// with --omit=dev --omit=optional in an empty folder, check that no development package came with it, start `node dist/main.js` against PostgreSQL, create an account with
// `node dist/cli/account.js`, sponsor, scrape /metrics, then SIGTERM under load; and deploy, stake and check our
// paymaster with `node dist/cli/contracts.js` on a chain as public chains carry it. PostgreSQL is what production runs on,
// so this runs in the DATABASE_URL pass of the suite; it makes a database of its own there.
const url = testDatabaseUrl();
const skip = url ? false : "needs DATABASE_URL (PostgreSQL): the production path runs in the suite's PostgreSQL pass";

const ROOT = path.resolve(import.meta.dirname, "../..");
const run = promisify(execFile);
const SHUTDOWN_TIMEOUT_MS = 10_000;
const METRICS_TOKEN = `metrics-${generatePrivateKey().slice(2, 34)}`;
/** The lock file's entries by install path (`node_modules/a/node_modules/b`), with npm's flags. */
type LockPackages = Record<string, { dev?: boolean; devOptional?: boolean }>;

/** Every package folder under `node_modules`, nested ones included, as a path relative to `root`. */
function installedPackages(root: string, folder = path.join(root, "node_modules")): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith("."))
    .flatMap((entry) =>
      entry.name.startsWith("@")
        ? readdirSync(path.join(folder, entry.name)).map((name) => path.join(folder, entry.name, name))
        : [path.join(folder, entry.name)],
    )
    .flatMap((dir) => [path.relative(root, dir), ...installedPackages(root, path.join(dir, "node_modules"))]);
}

let workDir = "";
let installDir = "";
let databaseName = "";
let databaseUrl = "";
let service: RunningService | undefined;
let env: NodeJS.ProcessEnv = {};
/** How long the build and the install took, reported with the test's result. */
let preparation = "";

before(async () => {
  if (!url) return;
  workDir = mkdtempSync(path.join(tmpdir(), "paymaster-production-"));
  // `npm pack` builds first (prepack), then packs exactly the `files` of package.json.
  const startedMs = Date.now();
  await run("npm", ["pack", "--pack-destination", workDir], { cwd: ROOT, timeout: 60_000 });
  const packedMs = Date.now();
  const tarball = readdirSync(workDir).find((name) => name.endsWith(".tgz"));
  assert.ok(tarball, "npm pack wrote a tarball");
  await run("tar", ["-xzf", tarball, "-C", workDir], { cwd: workDir });
  installDir = path.join(workDir, "package");
  // As the Dockerfile does: the pack, the lock file beside it, production dependencies only.
  copyFileSync(path.join(ROOT, "package-lock.json"), path.join(installDir, "package-lock.json"));
  await run("npm", ["install", "--omit=dev", "--omit=optional", "--prefer-offline", "--no-audit", "--no-fund"], {
    cwd: installDir,
    timeout: 120_000,
  });
  preparation = `built and packed in ${packedMs - startedMs} ms, installed in ${Date.now() - packedMs} ms`;

  databaseName = `paymaster_production_${process.pid}_${Date.now()}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE DATABASE ${databaseName}`);
  await admin.close();
  const target = new URL(url);
  target.pathname = `/${databaseName}`;
  databaseUrl = target.toString();
  // Nothing of this test process's environment (NODE_OPTIONS, test runner variables): only what an operator sets.
  env = {
    PATH: inheritedEnv().PATH,
    HOME: inheritedEnv().HOME,
    NODE_ENV: "production",
    DATABASE_URL: databaseUrl,
    SIGNER_PRIVATE_KEY: generatePrivateKey(),
    WEBHOOK_SIGNING_KEY: generatePrivateKey(),
    DATA_DIR: path.join(workDir, "data"),
    PORT: "0",
    // debug: sponsored decisions are logged there, and the check for secrets below should read every line there is.
    LOG_LEVEL: "debug",
    METRICS_TOKEN,
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
  };
});

after(async () => {
  if (service?.process.exitCode === null) await service.stop();
  if (!url) return;
  const admin = await openDatabase({ url });
  await admin.exec(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.close();
  rmSync(workDir, { recursive: true, force: true });
});

/** The value of one series in a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("the packed production install runs against PostgreSQL: account, sponsorship, health, metrics, then SIGTERM under load", {
  skip,
  timeout: 240_000,
}, async (t) => {
  t.diagnostic(preparation);
  // No development package, not even one a production package names as an optional peer (viem's typescript): every
  // installed folder is one the lock file has for production. (A devDependency may also be a production package's
  // dependency, as ajv is fastify's: the lock's flags, not the names, tell.)
  const lock = (JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as { packages: LockPackages })
    .packages;
  const installed = installedPackages(installDir);
  assert.ok(installed.includes(path.join("node_modules", "viem")), "the production dependencies are installed");
  assert.ok(!installed.includes(path.join("node_modules", "typescript")), "typescript is not installed");
  const development = installed.filter((dir) => !lock[dir] || lock[dir].dev || lock[dir].devOptional);
  assert.deepEqual(development, [], "installed packages the lock file has for development only (or not at all)");
  service = await startService(env, 30_000, { args: ["dist/main.js"], cwd: installDir });
  const base = service.baseUrl;

  // The account command of the install, against the same database: the authToken is its last line.
  const created = await run(process.execPath, ["dist/cli/account.js", "create", "--name", "production"], {
    cwd: installDir,
    env,
  });
  const authToken = created.stdout.trim().split("\n").at(-1) as string;
  assert.match(authToken, /^\S{20,}$/);

  const health = await fetch(`${base}/healthz`);
  assert.equal(health.status, 200);

  // The pack carries the built dashboard, which the install serves as the development start does.
  const dashboard = await fetch(`${base}/dashboard/`);
  assert.equal(dashboard.status, 200);
  assert.match(dashboard.headers.get("content-security-policy") ?? "", /script-src 'self'/);
  const script = /src="\.\/(main-[A-Z0-9]+\.js)"/.exec(await dashboard.text())?.[1];
  assert.ok(script, "the page names its script");
  assert.equal((await fetch(`${base}/dashboard/${script}`)).status, 200);
  const ready = await fetch(`${base}/readyz`);
  const readiness = (await ready.json()) as {
    status: string;
    database: string;
    migrations: string;
    signer: { kind: string; address: string };
  };
  assert.equal(ready.status, 200);
  assert.deepEqual(
    {
      status: readiness.status,
      database: readiness.database,
      migrations: readiness.migrations,
      signer: readiness.signer,
    },
    {
      status: "ready",
      database: "ok",
      migrations: "done",
      signer: { kind: "key", address: privateKeyToAccount(env.SIGNER_PRIVATE_KEY as `0x${string}`).address },
    },
  );

  const dapp = await managementCall(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    {
      name: "Production dApp",
      type: "HYBRID",
      chainId: 31337,
      version: "1.0.0",
    },
  );
  const apiKey = dapp.apiKey as string;
  const headers = { authToken, apiKey };
  const { fundingMessage } = await managementCall(base, "GET", `funding-message/${dapp.paymasterId}`, headers);
  const wallet = privateKeyToAccount(generatePrivateKey());
  await managementCall(base, "PATCH", "paymasterParameters", headers, {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await wallet.signMessage({ message: fundingMessage as string }),
    address: wallet.address,
  });
  await managementCall(base, "POST", "paymaster-policy", headers, {
    name: "one per sender",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: {
      type: "SMART_ACCOUNT",
      cycleDuration: { value: 1, unit: "day" },
      threshold: 1,
      thresholdType: "COUNT",
    },
  });
  // A second paymaster without a funding wallet: its requests are refused by the first rule.
  const unfunded = await managementCall(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    {
      name: "Unfunded dApp",
      type: "HYBRID",
      chainId: 31337,
      version: "1.0.0",
    },
  );

  const WARM = 20;
  for (let i = 0; i < WARM; i++) {
    const body = (await (await postSponsorship(base, apiKey, { sender: testSender(i) })).json()) as {
      result: { paymasterAndData: string };
    };
    assert.notEqual(body.result.paymasterAndData, "0x", JSON.stringify(body));
  }
  const refused = (await (
    await postSponsorship(base, unfunded.apiKey as string, { sender: testSender(0) })
  ).json()) as {
    result: { paymasterAndData: string };
  };
  assert.equal(refused.result.paymasterAndData, "0x");

  assert.equal((await fetch(`${base}/metrics`)).status, 401, "METRICS_TOKEN is required");
  const scrape = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  assert.equal(scrape.status, 200);
  assert.match(scrape.headers.get("content-type") ?? "", /^text\/plain/);
  const metrics = await scrape.text();
  const decisions = "paymaster_sponsorship_decisions_total";
  assert.equal(sample(metrics, `${decisions}{chain_id="31337",mode="sponsored",outcome="sponsored",reason=""}`), WARM);
  assert.equal(
    sample(metrics, `${decisions}{chain_id="31337",mode="sponsored",outcome="refused",reason="fundingAndRules"}`),
    1,
  );
  assert.ok((sample(metrics, 'paymaster_group_commit_batch_size_count{batch="sponsorships"}') ?? 0) >= 1);
  assert.ok(sample(metrics, "process_resident_memory_bytes") !== undefined, "the default process metrics are there");
  assert.ok(!metrics.includes(apiKey) && !metrics.includes(testSender(0)), "no apiKey or sender in any label");

  // SIGTERM with 300 sponsorships in flight on kept-alive connections.
  const LOAD = 300;
  // The signal comes once the service has answered a few of this load, with the rest of it in flight.
  const SIGNAL_AFTER = 20;
  let answered = 0;
  let enoughAnswered: () => void = () => {};
  const answering = new Promise<void>((resolve) => (enoughAnswered = resolve));
  const answers = Array.from({ length: LOAD }, (_, i) =>
    postSponsorship(base, apiKey, { sender: testSender(WARM + i) }).then(
      async (response) => {
        if (++answered === SIGNAL_AFTER) enoughAnswered();
        return { sender: testSender(WARM + i), status: response.status, body: await response.text() };
      },
      () => ({ sender: testSender(WARM + i), status: 0, body: "" }),
    ),
  );
  await answering;
  const signalledMs = Date.now();
  const exited = new Promise<number | null>((resolve) => service?.process.once("exit", (code) => resolve(code)));
  service.process.kill("SIGTERM");
  const results = await Promise.all(answers);
  const code = await exited;
  const tookMs = Date.now() - signalledMs;
  assert.equal(code, 0, `the service exits with 0 (output:\n${service.output().slice(-2000)})`);
  assert.ok(tookMs < SHUTDOWN_TIMEOUT_MS, `the process was gone ${tookMs} ms after SIGTERM`);

  const sponsored = results.filter(
    (r) =>
      r.status === 200 &&
      (JSON.parse(r.body) as { result?: { paymasterAndData: string } }).result?.paymasterAndData !== "0x",
  );
  assert.ok(
    sponsored.length >= SIGNAL_AFTER,
    "the requests answered before the signal, and those in flight, are there",
  );
  const db = await openDatabase({ url: databaseUrl });
  try {
    const rows = await db.query<{ sender: string }>("SELECT sender FROM sponsorships WHERE sponsored");
    const recorded = new Set(rows.map((row) => row.sender.toLowerCase()));
    const unrecorded = sponsored.filter((r) => !recorded.has(r.sender));
    assert.deepEqual(unrecorded, [], "every answered sponsorship is recorded");
  } finally {
    await db.close();
  }

  // Logs: JSON lines, one per decision with the dApp's name, and no secret anywhere.
  const lines = service.output().trim().split("\n");
  const parsed = lines.map((line) => JSON.parse(line) as { msg?: string; dapp?: string; outcome?: string });
  const decisionLines = parsed.filter((line) => line.msg === "sponsorship decision");
  assert.ok(decisionLines.length >= WARM + 1 + sponsored.length);
  assert.ok(decisionLines.some((line) => line.dapp === "Production dApp" && line.outcome === "sponsored"));
  const output = service.output();
  for (const secret of [apiKey, authToken, METRICS_TOKEN, env.SIGNER_PRIVATE_KEY as string]) {
    assert.ok(!output.includes(secret), "no apiKey, token or key is logged");
  }
  t.diagnostic(
    `production path: ${sponsored.length} of ${LOAD} in-flight sponsorships answered and recorded, exit ${tookMs} ms after SIGTERM`,
  );
});

test("the packed contracts command deploys, stakes and checks our paymaster on a chain as public chains carry it", {
  skip,
  timeout: 240_000,
}, async () => {
  // A chain with another id that holds what public chains hold for v0.7: the CREATE2 proxy and the canonical
  // EntryPoint, deployed through it. The command is the install's, run as an operator runs it.
  const chain = await startLocalChain({ chainId: 84532 });
  try {
    await deployCreate2Batch(chain.clients(anvilKeys.stranger), { entryPoint: entryPointStack("0.7").entryPoint });
    const owner = privateKeyToAccount(anvilKeys.owner).address;
    const ownerKeyFile = path.join(workDir, "owner.key");
    const chainsFile = path.join(workDir, "chains.json");
    writeFileSync(ownerKeyFile, anvilKeys.owner, { mode: 0o600 });
    writeFileSync(chainsFile, JSON.stringify([{ chainId: 84532, name: "Base Sepolia (anvil)" }]));
    const contracts = (args: string[]) =>
      run(process.execPath, ["dist/cli/contracts.js", ...args, "--rpc-url", chain.anvil.rpcUrl], {
        cwd: installDir,
        env: { ...env, CHAINS_FILE: chainsFile },
      });

    const deployed = await contracts([
      "deploy",
      "--entry-points",
      "0.7",
      "--owner",
      owner,
      "--key-file",
      ownerKeyFile,
      "--json",
    ]);
    const entry = JSON.parse(deployed.stdout) as { entryPoints: Record<string, { verifyingPaymaster: Address }> };
    const paymaster = entry.entryPoints["0.7"]?.verifyingPaymaster;
    assert.equal(
      paymaster,
      create2Address(paymasterInitCode(OUR_PAYMASTERS["0.7"].paymasters.verifying, ENTRY_POINT_V07_ADDRESS, owner)),
    );
    assert.match(deployed.stderr, /mined in block \d+: success/);

    // Not staked yet: status fails and says what to do.
    const unstaked = await contracts(["status", "--entry-points", "0.7", "--owner", owner]).then(
      () => assert.fail("status passes before the stake"),
      (failure: { code: number; stdout: string }) => failure,
    );
    assert.equal(unstaked.code, 1);
    assert.match(unstaked.stdout, /FAIL stake/);

    await contracts([
      "stake",
      "--entry-points",
      "0.7",
      "--key-file",
      ownerKeyFile,
      "--amount",
      "1",
      "--unstake-delay",
      "86400",
    ]);
    writeFileSync(chainsFile, JSON.stringify([{ ...entry, rpcUrl: chain.anvil.rpcUrl }]));
    const status = await contracts(["status", "--entry-points", "0.7", "--json"]);
    const report = JSON.parse(status.stdout) as { ok: boolean; checks: { check: string; ok: boolean }[] };
    assert.equal(report.ok, true, status.stdout);
    assert.ok(
      report.checks.some((line) => line.check === "signer" && line.ok),
      "the service's key is in the set",
    );
  } finally {
    await chain.anvil.stop();
  }
});
