import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createAccount } from "../../src/storage/accounts";
import { openDatabase } from "../../src/storage/database";
import { migrate } from "../../src/storage/migrations";
import { inheritedEnv, testDatabaseUrl } from "../helpers/database";
import { type RunningService, startService } from "../helpers/service";
import { managementCall, postSponsorship, testSender } from "../helpers/serviceClient";

// Two service processes sharing one PostgreSQL database: the limits must hold across them, in every unit (COUNT, USD)
// and cycle (day, month, week).
const url = testDatabaseUrl();
const skip = url ? false : "needs DATABASE_URL (PostgreSQL): PGlite serves one process";

const SENDERS = 200;
const NONCES_PER_SENDER = 5;
const GLOBAL_LIMIT = 100;
/** The chain's native token price in the instances' chains file, and what postSponsorship's operation costs in it. */
const PRICE = "1234.56";
/** (100,000 + 3 × 100,000 + 50,000) gas at 1 gwei = 0.00045 ETH, 0.555552 USD at 1234.56. */
const COST_USD_UNITS = 555_552n * 10n ** 12n;

let databaseUrl = "";
let databaseName = "";
let services: RunningService[] = [];
let dataDir = "";

before(async () => {
  if (!url) return;
  databaseName = `paymaster_concurrency_${process.pid}_${Date.now()}`;
  const admin = await openDatabase({ url });
  await admin.exec(`CREATE DATABASE ${databaseName}`);
  await admin.close();
  const target = new URL(url);
  target.pathname = `/${databaseName}`;
  databaseUrl = target.toString();
  dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-concurrency-"));
  // The default chains, with a fixed native token price on the local chain for the USD limit.
  const chains = JSON.parse(readFileSync(path.join(import.meta.dirname, "../../config/chains.json"), "utf8")) as {
    chainId: number;
  }[];
  const chainsFile = path.join(dataDir, "chains.json");
  writeFileSync(
    chainsFile,
    JSON.stringify(
      chains.map((chain) => (chain.chainId === 31337 ? { ...chain, nativeUsdPrice: { fixed: PRICE } } : chain)),
    ),
  );
  const env = {
    CHAINS_FILE: chainsFile,
    ...inheritedEnv(),
    DATABASE_URL: databaseUrl,
    SIGNER_PRIVATE_KEY: generatePrivateKey(),
    // Instances sharing a database must be given the same webhook signing key too.
    WEBHOOK_SIGNING_KEY: generatePrivateKey(),
    DATA_DIR: dataDir,
    PORT: "0",
    // The start line tells the port; request lines are not kept.
    LOG_LEVEL: "info",
  };
  services = await Promise.all([startService(env), startService(env)]);
});

after(async () => {
  await Promise.all(services.map((service) => service.stop()));
  if (!url) return;
  const admin = await openDatabase({ url });
  await admin.exec(`DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`);
  await admin.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** A dApp made through the first instance, with its funding wallet linked: the answer and its management headers. */
async function fundedDapp(authToken: string, name: string) {
  const [first] = services as [RunningService];
  const dapp = await managementCall(
    first.baseUrl,
    "POST",
    "paymasterParameters",
    { authToken },
    { name, type: "HYBRID", chainId: 31337, version: "1.0.0" },
  );
  const headers = { authToken, apiKey: dapp.apiKey as string };
  const { fundingMessage } = await managementCall(first.baseUrl, "GET", `funding-message/${dapp.paymasterId}`, headers);
  const wallet = privateKeyToAccount(generatePrivateKey());
  await managementCall(first.baseUrl, "PATCH", "paymasterParameters", headers, {
    paymasterId: dapp.paymasterId,
    type: "paymasterFundingId",
    signature: await wallet.signMessage({ message: fundingMessage as string }),
    address: wallet.address,
  });
  return { dapp, headers };
}

/** Every sender's nonces 0 to `nonces - 1`, all sent at once, each to one instance or the other in turn. */
function sponsorAll(apiKey: string, senders: string[], nonces: number) {
  const [first, second] = services as [RunningService, RunningService];
  const requests = [];
  for (let nonce = 0; nonce < nonces; nonce++) {
    for (const [s, sender] of senders.entries()) {
      const service = (s + nonce) % 2 === 0 ? first : second;
      requests.push(
        postSponsorship(service.baseUrl, apiKey, { sender, nonce, id: requests.length }).then(async (response) => ({
          sender,
          status: response.status,
          body: (await response.json()) as { result?: { paymasterAndData: string } },
        })),
      );
    }
  }
  return Promise.all(requests);
}

test("1,000 concurrent requests from 200 senders on two instances: exactly 100 sponsored, none above 1 per sender", {
  skip,
}, async () => {
  const db = await openDatabase({ url: databaseUrl });
  await migrate(db);
  const { authToken } = await createAccount(db, "concurrency", Date.now());
  const second = services[1] as RunningService;
  const { headers } = await fundedDapp(authToken, "busy");
  for (const [name, type, threshold] of [
    ["global", "PAYMASTER", GLOBAL_LIMIT],
    ["per sender", "SMART_ACCOUNT", 1],
  ] as const) {
    await managementCall(second.baseUrl, "POST", "paymaster-policy", headers, {
      name,
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type, cycleDuration: { value: 1, unit: "day" }, threshold, thresholdType: "COUNT" },
    });
  }

  const answers = await sponsorAll(
    headers.apiKey,
    Array.from({ length: SENDERS }, (_, s) => testSender(s)),
    NONCES_PER_SENDER,
  );
  assert.equal(answers.length, SENDERS * NONCES_PER_SENDER);
  assert.ok(
    answers.every((a) => a.status === 200),
    "every request is answered with a result",
  );
  const sponsored = answers.filter((a) => a.body.result?.paymasterAndData !== "0x");
  assert.equal(sponsored.length, GLOBAL_LIMIT, "exactly the global limit is sponsored");
  const perSender = new Map<string, number>();
  for (const a of sponsored) perSender.set(a.sender, (perSender.get(a.sender) ?? 0) + 1);
  assert.ok(
    [...perSender.values()].every((count) => count === 1),
    "no sender above its limit of 1",
  );

  const [usage] = await db.query<{ used: string }>(
    "SELECT used::text AS used FROM limit_usage u JOIN policies p ON p.id = u.policy_id WHERE p.name = 'global'",
  );
  assert.equal(usage?.used, String(GLOBAL_LIMIT));
  const [recorded] = await db.query<{ count: string }>(
    "SELECT count(*)::text AS count FROM sponsorships WHERE sponsored",
  );
  assert.equal(recorded?.count, String(GLOBAL_LIMIT));
  await db.close();
});

test("a USD limit with a month cycle and a per-sender week limit, 600 concurrent requests on two instances: exactly 37 signed", {
  skip,
}, async () => {
  const db = await openDatabase({ url: databaseUrl });
  await migrate(db);
  const { authToken } = await createAccount(db, "concurrency-usd", Date.now());
  const [first, second] = services as [RunningService, RunningService];
  const { dapp, headers } = await fundedDapp(authToken, "dollars");
  const OPERATIONS = 37;
  // Room for exactly 37 operations: 37 × 0.555552 USD.
  await managementCall(second.baseUrl, "POST", "paymaster-policy", headers, {
    name: "dollars a month",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: {
      type: "PAYMASTER",
      cycleDuration: { value: 1, unit: "month" },
      threshold: 20.555424,
      thresholdType: "USD",
    },
  });
  await managementCall(first.baseUrl, "POST", "paymaster-policy", headers, {
    name: "two a week",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: { type: "SMART_ACCOUNT", cycleDuration: "1 week", threshold: 2, thresholdType: "COUNT" },
  });

  const answers = await sponsorAll(
    headers.apiKey,
    Array.from({ length: 200 }, (_, s) => testSender(1000 + s)),
    3,
  );
  assert.ok(
    answers.every((a) => a.status === 200 && a.body.result),
    "every request is answered with a result",
  );
  const sponsored = answers.filter((a) => a.body.result?.paymasterAndData !== "0x");
  assert.equal(sponsored.length, OPERATIONS, "exactly what the dollars allow is signed");
  const perSender = new Map<string, number>();
  for (const a of sponsored) perSender.set(a.sender, (perSender.get(a.sender) ?? 0) + 1);
  assert.ok(
    [...perSender.values()].every((count) => count <= 2),
    "no sender above 2 a week",
  );

  const [usage] = await db.query<{ used: string }>(
    `SELECT u.used::text AS used FROM limit_usage u JOIN policies p ON p.id = u.policy_id
     WHERE p.paymaster_id = $1 AND p.name = 'dollars a month'`,
    [dapp.paymasterId],
  );
  assert.equal(usage?.used, String(BigInt(OPERATIONS) * COST_USD_UNITS));
  const recorded = await db.query<{ price: string | null }>(
    "SELECT native_usd_price::text AS price FROM sponsorships WHERE paymaster_id = $1 AND sponsored",
    [dapp.paymasterId],
  );
  assert.equal(recorded.length, OPERATIONS);
  assert.ok(
    recorded.every((row) => row.price === PRICE),
    "every signature keeps the price it was given at",
  );
  await db.close();
});
