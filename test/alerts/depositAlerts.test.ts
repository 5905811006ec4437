// deposit.low against a real chain: real sponsorships on anvil bring the dApp's deposit less what they hold below the
// threshold (one alert), more of them keep it below (no more), a depositFor brings it back above (re-armed, seen by
// the periodic check), and sponsorships bring it below again (a second alert). A real HTTP receiver counts them.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { parseGwei } from "viem";
import { readWatchedDeposits } from "../../src/alerts/depositWatch";
import { POST_OP_OVERHEAD_GAS } from "../../src/bindings/entryPoints/prefund";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { depositKey } from "../../src/chain/paymasterDeposit";
import { sponsoringChains } from "../../src/chain/sponsoringChains";
import { type DepositReading, InFlightCharges } from "../../src/sponsorship/rules/deposit";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { anvilKeys, reservedFor } from "../contracts/fixtures";
import { startTestApp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  requestSponsorship,
  startChainApp,
} from "../helpers/chainApp";
import { fundedDapp } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";
import { outboxOf, received, setAlerts, signedWith, webhookSecretOf } from "./helpers";

let app: ChainApp;
let receiver: WebhookServer;

before(async () => {
  receiver = await startWebhookServer();
  receiver.on("/alerts", (_request, response) => {
    response.writeHead(200, { "content-type": "application/json" });
    response.end("{}");
  });
  app = await startChainApp({ ctx: { alerts: { deliveryPollMs: 50, depositCheckMs: 100 } } });
});
after(async () => {
  await receiver.close();
  await app?.close();
});

/** A fresh account's first operation, at one fee so that every one holds the same. */
async function operation(): Promise<UserOperation> {
  const { op } = await freshOperation(app);
  return { ...op, maxFeePerGas: parseGwei("3"), maxPriorityFeePerGas: parseGwei("1") };
}

const belowNow = async (paymasterId: string) =>
  (
    await app.t.db.query<{ below: boolean }>("SELECT below FROM deposit_alert_state WHERE paymaster_id = $1", [
      paymasterId,
    ])
  )[0]?.below;

/**
 * Resolves once one whole periodic check (every 100 ms here) has run after the call: it has read the deposit as it is
 * now and handed the reading over. A check ends by deleting the delivered alerts older than a week, so a delivered
 * marker row made a week old is gone once a check has ended after it was written; two markers one after the other,
 * since the first may be deleted by a check that had begun before the call.
 */
async function wholePeriodicCheck(paymasterId: string): Promise<void> {
  for (const marker of ["first", "second"]) {
    const [row] = await app.t.db.query<{ id: string }>(
      `INSERT INTO alert_outbox (paymaster_id, event, url, body, created_ms, next_attempt_ms, state)
       VALUES ($1, 'marker', '', '', 0, 0, 'sent') RETURNING id::text AS id`,
      [paymasterId],
    );
    await eventually(
      `the ${marker} marker deleted by a periodic check`,
      async () => (await app.t.db.query("SELECT id FROM alert_outbox WHERE id = $1", [row?.id])).length,
      (left) => left === 0,
    );
  }
}

/** Waits until a reading has found the deposit above the threshold (`what`: which reading). */
const seenAbove = (paymasterId: string, what: string) =>
  eventually(
    what,
    () => belowNow(paymasterId),
    (below) => below === false,
  );

/** The events queued for the paymaster, oldest first. */
const queuedEvents = async (paymasterId: string) => (await outboxOf(app.t, paymasterId)).map((row) => row.event);

test("one deposit.low per crossing below the threshold, again only after the deposit has risen above it", async () => {
  const dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
  const wallet = (
    await app.t.call("GET", `funding-balance/${dapp.paymasterId}`, { token: dapp.token, apiKey: dapp.apiKey })
  ).body.data as { fundingWalletAddress: string; verifyingPaymaster: string };
  const secret = await webhookSecretOf(app.t, dapp);
  const ops = await Promise.all(Array.from({ length: 5 }, () => operation()));
  const needed = reservedFor(ops[0] as UserOperation, POST_OP_OVERHEAD_GAS);
  // Three operations' worth; the alert fires once less than one and a half remain available.
  await deposit(app, 3n * needed, anvilKeys.fundingWallet);
  const threshold = needed + needed / 2n;
  await setAlerts(app.t, dapp, receiver.url("/alerts"), threshold.toString());
  await seenAbove(dapp.paymasterId, "the periodic check's first reading (above)");

  // 3 → 2 operations available: above. 2 → 1: below, the alert. 1 → 0: still below, no alert.
  assert.equal((await requestSponsorship(app.t, dapp, ops[0] as UserOperation)).reason, undefined);
  assert.equal((await requestSponsorship(app.t, dapp, ops[1] as UserOperation)).reason, undefined);
  await received(receiver, "/alerts", 1, "the first alert");
  assert.equal((await requestSponsorship(app.t, dapp, ops[2] as UserOperation)).reason, undefined);
  // Sponsorships and periodic checks keep finding it below: no second alert (counted once the top-up below is seen).
  await wholePeriodicCheck(dapp.paymasterId);

  const [first] = receiver.callsTo("/alerts");
  assert.ok(first);
  assert.ok(signedWith(secret, first, app.t.ctx.now()));
  const alert = JSON.parse(first.body);
  assert.deepEqual(
    { ...alert, at: typeof alert.at },
    {
      event: "deposit.low",
      paymasterId: dapp.paymasterId,
      chainId: 31337,
      depositWei: (3n * needed).toString(),
      outstandingWei: (2n * needed).toString(),
      availableWei: needed.toString(),
      thresholdWei: threshold.toString(),
      at: "string",
      entryPointVersion: "0.6",
      verifyingPaymaster: wallet.verifyingPaymaster.toLowerCase(),
    },
  );
  assert.ok(Math.abs(Date.parse(alert.at) - Date.now()) < 60_000);

  // A top-up: the periodic check sees it above again (re-armed), no alert for rising.
  await deposit(app, 3n * needed, anvilKeys.fundingWallet);
  await seenAbove(dapp.paymasterId, "re-armed by the periodic check");
  // The readings of a deposit are noted one at a time in the order they were taken (an older one arriving later is
  // dropped): every reading below, the third sponsorship's and the periodic check's, was noted before the one that
  // re-armed. None queued a second alert.
  assert.deepEqual(await queuedEvents(dapp.paymasterId), ["deposit.low"]);
  assert.equal(receiver.callsTo("/alerts").length, 1);
  // Past the deposit rule's 2 s balance cache, so the sponsorships see the top-up too.
  app.advance(2_500);

  // 6 - 3 = 3 available → 2 → 1: below again, the second alert.
  assert.equal((await requestSponsorship(app.t, dapp, ops[3] as UserOperation)).reason, undefined);
  assert.equal((await requestSponsorship(app.t, dapp, ops[4] as UserOperation)).reason, undefined);
  await received(receiver, "/alerts", 2, "the second alert");
  // Below again for a whole periodic check, then a top-up, re-armed: every reading below was noted before that one.
  await wholePeriodicCheck(dapp.paymasterId);
  await deposit(app, 3n * needed, anvilKeys.fundingWallet);
  await seenAbove(dapp.paymasterId, "re-armed again");
  assert.deepEqual(await queuedEvents(dapp.paymasterId), ["deposit.low", "deposit.low"], "no third alert");
  await eventually(
    "both alerts marked sent",
    async () => (await outboxOf(app.t, dapp.paymasterId)).map((row) => row.state),
    (states) => states.every((state) => state === "sent"),
  );
  const calls = receiver.callsTo("/alerts");
  assert.equal(calls.length, 2);
  const second = JSON.parse(calls[1]?.body ?? "{}");
  assert.deepEqual(
    [second.depositWei, second.outstandingWei, second.availableWei],
    [(6n * needed).toString(), (5n * needed).toString(), needed.toString()],
  );
});

test("without the periodic check, the sponsorships' own readings alert; a refusal for want of deposit sends no second one", async () => {
  // A second service on the same chain with no background timers: only the readings taken by the deposit check of
  // each sponsorship can cross the threshold, and the alert is sent at once (no poll).
  const t = await startTestApp({ signer: app.env.serviceSigner, chains: app.t.ctx.chains, now: app.t.ctx.now });
  let closed = false;
  try {
    const dapp = await chainDapp(t, anvilKeys.otherFundingWallet);
    const ops = await Promise.all(Array.from({ length: 3 }, () => operation()));
    const needed = reservedFor(ops[0] as UserOperation, POST_OP_OVERHEAD_GAS);
    await deposit(app, 2n * needed, anvilKeys.otherFundingWallet);
    await setAlerts(t, dapp, receiver.url("/own-readings"), needed.toString());
    receiver.on("/own-readings", (_request, response) => {
      response.writeHead(200);
      response.end();
    });

    // 2 → 1 operation available: at the threshold, not below. 1 → 0: below, the alert.
    assert.equal((await requestSponsorship(t, dapp, ops[0] as UserOperation)).reason, undefined);
    assert.equal((await requestSponsorship(t, dapp, ops[1] as UserOperation)).reason, undefined);
    await received(receiver, "/own-readings", 1, "the alert");
    // Refused for want of deposit: a reading below again, no second alert.
    assert.match((await requestSponsorship(t, dapp, ops[2] as UserOperation)).reason ?? "", /^Deposit too small/);
    // Closing the service waits for the readings handed to its alerts to be noted and for the delivery pass they
    // started: whatever the three readings were going to send has been sent.
    closed = true;
    await t.close();
    const calls = receiver.callsTo("/own-readings");
    assert.equal(calls.length, 1);
    // The second sponsorship's figures, the first below: the readings of a deposit are noted in the order they were
    // taken, so an alert from the first sponsorship's (at the threshold, not below) would have been this one.
    const alert = JSON.parse(calls[0]?.body ?? "{}");
    assert.deepEqual(
      [alert.depositWei, alert.outstandingWei, alert.availableWei, alert.thresholdWei],
      [(2n * needed).toString(), (2n * needed).toString(), "0", needed.toString()],
    );
  } finally {
    if (!closed) await t.close();
  }
});

test("the periodic check's reading counts the sponsorships of this process being signed", async () => {
  // A sponsorship that passed its deposit check and is not recorded yet is in no outstanding query: without it, a
  // reading taken meanwhile finds the deposit higher than the sponsorship's own did and can re-arm the alert.
  const dapp = await fundedDapp(app.t, { fundingKey: anvilKeys.stranger });
  // Threshold 0: the app's own periodic check finds nothing below meanwhile.
  await setAlerts(app.t, dapp, receiver.url("/alerts"), "0");
  const chains = sponsoringChains(app.t.ctx.chains);
  const verifyingPaymaster = chains.get(31337)?.verifyingPaymaster as string;
  const inFlight = new InFlightCharges();
  const signing = inFlight.hold(depositKey(31337, verifyingPaymaster, dapp.fundingAddress), 7n);
  const readings: DepositReading[] = [];
  await readWatchedDeposits(
    { db: app.t.db, chains, outstanding: new OutstandingCharges(app.t.db), inFlight },
    Date.now(),
    (reading) => readings.push(reading),
  );
  signing.drop();
  assert.deepEqual(
    readings
      .filter((reading) => reading.paymasterId === dapp.paymasterId)
      .map((reading) => [
        reading.entryPointVersion,
        reading.paymasterAddress,
        reading.depositWei,
        reading.outstandingWei,
      ]),
    [["0.6", verifyingPaymaster.toLowerCase(), 0n, 7n]],
  );
});
