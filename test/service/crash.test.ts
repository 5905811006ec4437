import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createAccount } from "../../src/storage/accounts";
import type { Database } from "../../src/storage/database";
import { openStorage } from "../../src/storage/open";
import { inheritedEnv, testDatabaseUrl } from "../helpers/database";
import { embeddedEnv, type RunningService, startService } from "../helpers/service";
import { managementCall, postSponsorship, testSender } from "../helpers/serviceClient";
import { migratedServiceDatabase } from "../helpers/servicePostgres";

// SIGKILL under load, then a restart: a spending limit's usage must equal the sponsorships on record, on both
// databases. Chain 31337 has no RPC here, so nothing (no settlement, no expiry) would ever give an orphan back.

const KILLS = 3;
const IN_FLIGHT = 48;
// A start after a kill recovers the database; on a busy machine (CI runs both test passes side by side on two cores)
// the embedded one can take a while: this bounds a hang, it does not time the start.
const START_TIMEOUT_MS = 120_000;
const url = testDatabaseUrl();
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A dApp with a funding wallet and one PAYMASTER COUNT limit far above what the test sends. */
async function setUpDapp(base: string, authToken: string) {
  const dapp = (await managementCall<unknown>(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    {
      name: "crash",
      type: "HYBRID",
      chainId: 31337,
      version: "1.0.0",
    },
  )) as { apiKey: string; paymasterId: string };
  const headers = { authToken, apiKey: dapp.apiKey };
  const { fundingMessage } = (await managementCall<unknown>(
    base,
    "GET",
    `funding-message/${dapp.paymasterId}`,
    headers,
  )) as {
    fundingMessage: string;
  };
  const wallet = privateKeyToAccount(generatePrivateKey());
  await managementCall(base, "PATCH", "paymasterParameters", headers, {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await wallet.signMessage({ message: fundingMessage }),
    address: wallet.address,
  });
  await managementCall(base, "POST", "paymaster-policy", headers, {
    name: "cap",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: {
      type: "PAYMASTER",
      cycleDuration: { value: 1, unit: "day" },
      threshold: 1_000_000,
      thresholdType: "COUNT",
    },
  });
  return { ...dapp, headers };
}

/**
 * Keeps IN_FLIGHT sponsorships going, each a new (sender, nonce), until the service dies; kills it with SIGKILL once
 * `answered` requests have been answered and a few more are under way. Returns how many were answered sponsored.
 */
async function loadUntilKilled(service: RunningService, apiKey: string, first: number, answered: number) {
  let next = first;
  let sponsored = 0;
  let done = 0;
  let dead = false;
  const worker = async () => {
    while (!dead) {
      const n = next++;
      try {
        const response = await postSponsorship(service.baseUrl, apiKey, { sender: testSender(n), id: n });
        const body = (await response.json()) as { result?: { paymasterAndData: string } };
        assert.equal(response.status, 200, JSON.stringify(body));
        // Answered, even after the kill was decided: a signature given out, which must be on record.
        if (body.result?.paymasterAndData !== "0x") sponsored++;
        if (++done === answered) {
          // Mid-load: the other requests are somewhere between their rules, their signature and their record.
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 20)));
          dead = true;
          service.process.kill("SIGKILL");
        }
      } catch (error) {
        // Once killed, a broken connection is the kill's doing; before, it is a failure of the service.
        if (!dead) throw error;
      }
    }
  };
  const exited = new Promise((resolve) => service.process.once("exit", resolve));
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await exited;
  return { sponsored, next };
}

async function ledgerAndRecords(db: Database, paymasterId: string) {
  const [row] = await db.query<{ used: string; reservations: string; records: string }>(
    `SELECT
       (SELECT COALESCE(SUM(u.used), 0)::text FROM limit_usage u JOIN policies p ON p.id = u.policy_id
        WHERE p.paymaster_id = $1) AS used,
       (SELECT count(*)::text FROM limit_reservations r JOIN policies p ON p.id = r.policy_id
        WHERE p.paymaster_id = $1) AS reservations,
       (SELECT count(*)::text FROM sponsorships WHERE paymaster_id = $1 AND sponsored) AS records`,
    [paymasterId],
  );
  return row;
}

type State = { used: string; reservations: string; records: string };

async function crashScenario(
  env: NodeJS.ProcessEnv,
  authToken: (service: RunningService) => Promise<string>,
  readState: (paymasterId: string) => Promise<State | undefined>,
) {
  let service = await startService(env, START_TIMEOUT_MS);
  const dapp = await setUpDapp(service.baseUrl, await authToken(service));
  let next = 0;
  let answeredSponsored = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const run = await loadUntilKilled(service, dapp.apiKey, next, 60 + kill * 20);
    next = run.next;
    answeredSponsored += run.sponsored;
    service = await startService(env, START_TIMEOUT_MS);
  }
  try {
    const [usage] = (await managementCall<unknown>(service.baseUrl, "GET", "paymaster-policy/usage", dapp.headers)) as {
      used: string;
    }[];
    // The embedded database is the service's alone while it runs.
    if (!env.DATABASE_URL) assert.equal(await service.stop(), 0);
    const state = await readState(dapp.paymasterId);
    assert.ok(state);
    const { used, reservations, records } = state;
    assert.ok(Number(records) >= answeredSponsored, "every signature given out is on record");
    assert.ok(answeredSponsored > 0, "the load got answers before each kill");
    assert.deepEqual(
      { usageEndpoint: usage?.used, used, reservations },
      { usageEndpoint: records, used: records, reservations: records },
      `the usage equals the ${records} sponsorships recorded (${answeredSponsored} answered before the kills)`,
    );
  } finally {
    await service.stop();
  }
}

test("PGlite: after SIGKILL under load and a restart, the limit's usage equals the sponsorships recorded", async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-crash-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  await crashScenario(
    embeddedEnv(dataDir),
    // A fresh embedded start prints the development account's token.
    async (service) => /pm_[A-Za-z0-9_-]{43}/.exec(await service.outputMatching(/pm_[A-Za-z0-9_-]{43}/))?.[0] ?? "",
    async (paymasterId) => {
      const storage = await openStorage({ dataDir }, "cli");
      try {
        return await ledgerAndRecords(storage.db, paymasterId);
      } finally {
        await storage.close();
      }
    },
  );
});

test("PostgreSQL: after SIGKILL under load and a restart, the limit's usage equals the sponsorships recorded", {
  skip: url ? false : "needs DATABASE_URL (PostgreSQL)",
}, async () => {
  const { url: databaseUrl, db } = await migratedServiceDatabase(url as string, "paymaster_crash", cleanups);
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-crash-pg-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = {
    ...inheritedEnv(),
    DATABASE_URL: databaseUrl,
    SIGNER_PRIVATE_KEY: generatePrivateKey(),
    WEBHOOK_SIGNING_KEY: generatePrivateKey(),
    DATA_DIR: dataDir,
    PORT: "0",
    // The start line tells the port.
    LOG_LEVEL: "info",
    LOCAL_CHAIN: "off",
  };
  await crashScenario(
    env,
    async () => (await createAccount(db, "crash", Date.now())).authToken,
    (paymasterId) => ledgerAndRecords(db, paymasterId),
  );
});
