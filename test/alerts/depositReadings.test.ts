// The order of deposit.low's readings in one process, over a real database (PGlite, or PostgreSQL with DATABASE_URL)
// and a real HTTP receiver: a reading is noted only if it is newer than every reading of that deposit taken in before
// it, so a slow reading (the periodic check's) handed over after a sponsorship's newer one cannot re-arm the alert.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Fastify from "fastify";
import { generatePrivateKey } from "viem/accounts";
import { Alerts } from "../../src/alerts/alerts";
import { depositKey } from "../../src/chain/paymasterDeposit";
import { Secret } from "../../src/config";
import { createMetrics } from "../../src/metrics/metrics";
import { type DepositReading, InFlightCharges } from "../../src/sponsorship/rules/deposit";
import { saveAlertSettings } from "../../src/storage/alerts";
import type { Database } from "../../src/storage/database";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { guardOf } from "../../src/webhooks/settings";
import { openTestDatabase } from "../helpers/database";
import { testLookup } from "../helpers/dns";
import { storedPaymaster } from "../helpers/storedPaymaster";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

const VERIFYING_PAYMASTER = "0x00000000000000000000000000000000000000aa";
const FUNDING = "0x00000000000000000000000000000000000000f1";
const THRESHOLD = 100n;

let db: Database;
let receiver: WebhookServer;
before(async () => {
  db = await openTestDatabase();
  receiver = await startWebhookServer();
  receiver.on("/alerts", (_request, response) => {
    response.writeHead(200);
    response.end();
  });
});
after(async () => {
  await receiver.close();
  await db.close();
});

/** Alerts as the app builds them, without the timers: each reading is handed over by the test. */
function alertsOn(inFlight: InFlightCharges): Alerts {
  const settings = {
    allowPrivate: true,
    timeoutMs: 2_000,
    signingKey: new Secret(generatePrivateKey()),
    lookup: testLookup,
  };
  return new Alerts({
    db,
    chains: new Map(),
    outstanding: new OutstandingCharges(db),
    inFlight,
    settings,
    guard: guardOf(settings, () => []),
    now: Date.now,
    log: Fastify().log,
    metrics: createMetrics(),
  });
}

async function paymasterWithAlerts(): Promise<string> {
  const paymaster = await storedPaymaster(db, "readings");
  await saveAlertSettings(db, { paymasterId: paymaster.id, thresholdWei: THRESHOLD, url: receiver.url("/alerts") });
  return paymaster.id;
}

const below = async (paymasterId: string) =>
  (
    await db.query<{ below: boolean }>("SELECT below FROM deposit_alert_state WHERE paymaster_id = $1", [paymasterId])
  )[0]?.below;

const alertsOf = async (paymasterId: string) =>
  (await db.query("SELECT 1 FROM alert_outbox WHERE paymaster_id = $1 AND event = 'deposit.low'", [paymasterId]))
    .length;

/**
 * Takes readings of one deposit of 1000 wei the way the deposit check and the periodic check do: each one's place is
 * when its read of the in-flight charges ended.
 */
function readingsOf(paymasterId: string, inFlight: InFlightCharges) {
  return (outstandingWei: bigint): DepositReading => {
    const { order, exact } = inFlight.endRead(inFlight.beginRead(), KEY);
    return reading(paymasterId, outstandingWei, order, exact);
  };
}

const KEY = depositKey(31337, VERIFYING_PAYMASTER, FUNDING);

function reading(paymasterId: string, outstandingWei: bigint, order: number, exact: boolean): DepositReading {
  return {
    paymasterId,
    chainId: 31337,
    paymasterAddress: VERIFYING_PAYMASTER,
    entryPointVersion: "0.6",
    depositWei: 1000n,
    outstandingWei,
    nowMs: Date.now(),
    order,
    exact,
  };
}

/** A paymaster with deposit alerts whose first reading, all 1000 wei available, was noted above the threshold. */
async function aboveAtFirst() {
  const inFlight = new InFlightCharges();
  const alerts = alertsOn(inFlight);
  const paymasterId = await paymasterWithAlerts();
  const read = readingsOf(paymasterId, inFlight);
  alerts.depositObserved(read(0n));
  await alerts.idle();
  return { inFlight, alerts, paymasterId, read };
}

test("a reading taken before a sponsorship's and handed over after it does not re-arm: one alert per crossing", async () => {
  // The interleaving that sent a second alert for one crossing: the periodic check read the deposit still above, a
  // sponsorship then took it below and its reading, noted first, queued the alert; the periodic check's older reading,
  // noted next, re-armed it, and the following reading below queued another.
  const { alerts, paymasterId, read } = await aboveAtFirst();
  assert.equal(await below(paymasterId), false);

  const periodic = read(500n); // 500 available: above
  const sponsorship = read(950n); // 50 available: below
  alerts.depositObserved(sponsorship);
  await alerts.idle();
  assert.equal(await alertsOf(paymasterId), 1);
  alerts.depositObserved(periodic);
  await alerts.idle();
  assert.equal(await below(paymasterId), true, "the older reading is dropped");
  alerts.depositObserved(read(950n));
  await alerts.idle();
  assert.equal(await alertsOf(paymasterId), 1);
  assert.equal(
    receiver.callsTo("/alerts").filter((call) => JSON.parse(call.body).paymasterId === paymasterId).length,
    1,
  );

  // A newer reading above re-arms it as before, and the next fall below alerts again.
  alerts.depositObserved(read(500n));
  alerts.depositObserved(read(990n));
  await alerts.idle();
  assert.equal(await alertsOf(paymasterId), 2);
  await alerts.stop();
});

test("an older reading handed over while a newer one is being written is dropped too", async () => {
  const { alerts, paymasterId, read } = await aboveAtFirst();

  const periodic = read(500n);
  const sponsorship = read(950n);
  // Back to back: the sponsorship's statement is under way when the periodic check's reading arrives.
  alerts.depositObserved(sponsorship);
  alerts.depositObserved(periodic);
  await alerts.idle();
  assert.equal(await below(paymasterId), true);
  alerts.depositObserved(read(950n));
  await alerts.idle();
  assert.equal(await alertsOf(paymasterId), 1);
  await alerts.stop();
});

test("a reading that may count a sponsorship twice is not noted: it cannot cross the threshold by itself", async () => {
  const { inFlight, alerts, paymasterId, read } = await aboveAtFirst();
  assert.equal(await below(paymasterId), false);

  // A sponsorship recorded while the read ran: its query may or may not have counted it, and the tally adds it.
  const started = inFlight.beginRead();
  inFlight.hold(KEY, 450n).recorded();
  const during = inFlight.endRead(started, KEY);
  assert.deepEqual([during.held, during.exact], [450n, false]);
  alerts.depositObserved(reading(paymasterId, 950n, during.order, during.exact));
  // One still being signed when a read ends: the same doubt (its record may have committed already).
  const signing = inFlight.hold(KEY, 450n);
  const whileSigning = inFlight.endRead(inFlight.beginRead(), KEY);
  assert.equal(whileSigning.exact, false);
  alerts.depositObserved(reading(paymasterId, 950n, whileSigning.order, whileSigning.exact));
  await alerts.idle();
  assert.equal(await below(paymasterId), false, "neither doubtful reading was noted");
  assert.equal(await alertsOf(paymasterId), 0);

  signing.recorded();
  alerts.depositObserved(read(950n));
  await alerts.idle();
  assert.equal(await alertsOf(paymasterId), 1, "the next exact reading decides");
  await alerts.stop();
});
