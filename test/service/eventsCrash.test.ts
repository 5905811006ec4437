// SIGKILL of the service in the middle of its event deliveries, then a restart: every event reaches the receiver (at
// least once, the same id each time), none is skipped, and none overtakes another. The receiver verifies every
// delivery with the standardwebhooks package. On both databases: the embedded one (the restart takes back the dead
// process's leases at once) and PostgreSQL (the dead instance's lease runs out, then the restarted one delivers).
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { DELIVERY_BATCH } from "../../src/events/delivery";
import { createAccount } from "../../src/storage/accounts";
import { type EventReceiver, startEventReceiver } from "../events/receiver";
import { inheritedEnv, testDatabaseUrl } from "../helpers/database";
import { eventually } from "../helpers/eventually";
import { embeddedEnv, type RunningService, startService } from "../helpers/service";
import { managementCall, postSponsorship, testSender } from "../helpers/serviceClient";
import { migratedServiceDatabase } from "../helpers/servicePostgres";

const EVENTS = 60;
const START_TIMEOUT_MS = 120_000;
const url = testDatabaseUrl();
const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A dApp with a funding wallet and a limit far above what the test sends, and an endpoint for its signed events. */
async function setUpDapp(base: string, authToken: string, receiver: EventReceiver) {
  const dapp = await managementCall<{ apiKey: string; paymasterId: string }>(
    base,
    "POST",
    "paymasterParameters",
    { authToken },
    { name: "events", type: "HYBRID", chainId: 31337, version: "1.0.0" },
  );
  const headers = { authToken, apiKey: dapp.apiKey };
  const { fundingMessage } = await managementCall<{ fundingMessage: string }>(
    base,
    "GET",
    `funding-message/${dapp.paymasterId}`,
    headers,
  );
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
  const endpoint = await managementCall<{ secret: string }>(base, "POST", "event-endpoints", headers, {
    url: receiver.url,
    events: ["sponsorship.signed"],
  });
  receiver.secrets.push(endpoint.secret);
  return dapp;
}

async function killMidDelivery(env: NodeJS.ProcessEnv, authToken: (service: RunningService) => Promise<string>) {
  const receiver = await startEventReceiver();
  cleanups.push(() => receiver.close());
  // Slow enough that the kill finds deliveries still to make, one of them perhaps on the wire.
  receiver.delayMs = 10;
  let service = await startService(env, START_TIMEOUT_MS);
  const dapp = await setUpDapp(service.baseUrl, await authToken(service), receiver);
  for (let n = 0; n < EVENTS; n++) {
    const response = await postSponsorship(service.baseUrl, dapp.apiKey, { sender: testSender(n), id: n });
    const body = (await response.json()) as { result?: { paymasterAndData: string } };
    assert.notEqual(body.result?.paymasterAndData ?? "0x", "0x", JSON.stringify(body));
  }
  await eventually(
    "some deliveries made",
    () => receiver.accepted().length,
    (n) => n >= 10,
    { withinMs: 60_000, everyMs: 1 },
  );
  const exited = new Promise((resolve) => service.process.once("exit", resolve));
  service.process.kill("SIGKILL");
  await exited;
  const beforeRestart = receiver.accepted().length;
  assert.ok(beforeRestart < EVENTS, `the kill came after every delivery (${beforeRestart}): nothing was tested`);

  service = await startService(env, START_TIMEOUT_MS);
  cleanups.push(async () => {
    await service.stop();
  });
  const accepted = await eventually(
    "every event after the restart",
    () => receiver.accepted(),
    (events) => new Set(events.map((event) => event.id)).size >= EVENTS,
    // On PostgreSQL the dead instance's lease (the call's timeout and 30 s) must run out first.
    { withinMs: 120_000 },
  );
  const ids = new Map<number, string>();
  let highest = 0;
  for (const event of accepted) {
    assert.ok(event.sequence <= highest + 1, `sequence ${event.sequence} overtook ${highest + 1}`);
    highest = Math.max(highest, event.sequence);
    const known = ids.get(event.sequence);
    assert.ok(known === undefined || known === event.id, "a sequence number changed its event");
    ids.set(event.sequence, event.id);
  }
  assert.deepEqual(
    [...ids.keys()].sort((x, y) => x - y),
    Array.from({ length: EVENTS }, (_, i) => i + 1),
  );
  assert.equal(new Set(ids.values()).size, EVENTS, "one id per event");
  assert.ok(
    accepted.every((event) => event.verifiedBy.length === 1),
    "every delivery verifies",
  );
  // At least once: what the killed process sent of its last batch and had not yet written down comes again (the
  // batch's attempts are written together after their calls), nothing more than that.
  assert.ok(
    accepted.length <= EVENTS + DELIVERY_BATCH,
    `${accepted.length - EVENTS} deliveries came twice, more than one batch of ${DELIVERY_BATCH}`,
  );
}

test("PGlite: SIGKILL mid-delivery loses no event: after the restart each arrives, in order", async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-events-crash-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  await killMidDelivery(
    embeddedEnv(dataDir, { WEBHOOK_ALLOW_PRIVATE: "true" }),
    async (service) => /pm_[A-Za-z0-9_-]{43}/.exec(await service.outputMatching(/pm_[A-Za-z0-9_-]{43}/))?.[0] ?? "",
  );
});

test("PostgreSQL: SIGKILL mid-delivery loses no event: after the restart each arrives, in order", {
  skip: url ? false : "needs DATABASE_URL (PostgreSQL)",
}, async () => {
  const { url: databaseUrl, db } = await migratedServiceDatabase(url as string, "paymaster_events_crash", cleanups);
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-events-crash-pg-"));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  await killMidDelivery(
    {
      ...inheritedEnv(),
      DATABASE_URL: databaseUrl,
      SIGNER_PRIVATE_KEY: generatePrivateKey(),
      WEBHOOK_SIGNING_KEY: generatePrivateKey(),
      WEBHOOK_ALLOW_PRIVATE: "true",
      DATA_DIR: dataDir,
      PORT: "0",
      LOG_LEVEL: "info",
      LOCAL_CHAIN: "off",
    },
    async () => (await createAccount(db, "events-crash", Date.now())).authToken,
  );
});
