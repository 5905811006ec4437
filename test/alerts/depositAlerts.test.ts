// deposit.low against a real chain: real sponsorships on anvil bring the dApp's deposit less what they hold below the
// threshold (one alert), more of them keep it below (no more), a depositFor brings it back above (re-armed, seen by
// the periodic check), and sponsorships bring it below again (a second alert). A real HTTP receiver counts them.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { parseGwei } from "viem";
import { readWatchedDeposits } from "../../src/alerts/depositWatch";
import { depositKey } from "../../src/chain/paymasterDeposit";
import { sponsoringChains } from "../../src/chain/sponsoringChains";
import { POST_OP_OVERHEAD_GAS } from "../../src/sponsorship/entryPoints/prefund";
import type { UserOperation } from "../../src/sponsorship/entryPoints/userOperation";
import { type DepositReading, InFlightCharges } from "../../src/sponsorship/rules/deposit";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { verifyWebhookSignature } from "../../src/webhooks/signature";
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
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";
import { eventually, outboxOf, setAlerts, webhookSecretOf } from "./helpers";

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
  await eventually(
    "the periodic check's first reading (above)",
    async () => (await belowNow(dapp.paymasterId)) === false,
  );

  // 3 → 2 operations available: above. 2 → 1: below, the alert. 1 → 0: still below, no alert.
  assert.equal((await requestSponsorship(app.t, dapp, ops[0] as UserOperation)).reason, undefined);
  assert.equal((await requestSponsorship(app.t, dapp, ops[1] as UserOperation)).reason, undefined);
  await eventually("the first alert", () => receiver.callsTo("/alerts").length >= 1);
  assert.equal((await requestSponsorship(app.t, dapp, ops[2] as UserOperation)).reason, undefined);
  // Sponsorships and periodic checks (every 100 ms) keep finding it below: no second alert.
  await sleep(600);
  assert.equal(receiver.callsTo("/alerts").length, 1);

  const [first] = receiver.callsTo("/alerts");
  assert.ok(first);
  assert.ok(
    verifyWebhookSignature(
      secret,
      first.headers["x-paymaster-signature"] as string,
      first.headers["x-paymaster-timestamp"] as string,
      first.body,
    ),
  );
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
  await eventually("re-armed by the periodic check", async () => (await belowNow(dapp.paymasterId)) === false);
  // Past the deposit rule's 2 s balance cache, so the sponsorships see the top-up too.
  app.advance(2_500);
  assert.equal(receiver.callsTo("/alerts").length, 1);

  // 6 - 3 = 3 available → 2 → 1: below again, the second alert.
  assert.equal((await requestSponsorship(app.t, dapp, ops[3] as UserOperation)).reason, undefined);
  assert.equal((await requestSponsorship(app.t, dapp, ops[4] as UserOperation)).reason, undefined);
  await eventually("the second alert", () => receiver.callsTo("/alerts").length >= 2);
  await sleep(600);
  const calls = receiver.callsTo("/alerts");
  assert.equal(calls.length, 2);
  const second = JSON.parse(calls[1]?.body ?? "{}");
  assert.deepEqual(
    [second.depositWei, second.outstandingWei, second.availableWei],
    [(6n * needed).toString(), (5n * needed).toString(), needed.toString()],
  );
  assert.deepEqual(
    (await outboxOf(app.t, dapp.paymasterId)).map((row) => [row.event, row.state]),
    [
      ["deposit.low", "sent"],
      ["deposit.low", "sent"],
    ],
  );
});

test("without the periodic check, the sponsorships' own readings alert; a refusal for want of deposit sends no second one", async () => {
  // A second service on the same chain with no background timers: only the readings taken by the deposit check of
  // each sponsorship can cross the threshold, and the alert is sent at once (no poll).
  const t = await startTestApp({ signer: app.env.serviceSigner, chains: app.t.ctx.chains, now: app.t.ctx.now });
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
    await sleep(300);
    assert.equal(receiver.callsTo("/own-readings").length, 0);
    assert.equal((await requestSponsorship(t, dapp, ops[1] as UserOperation)).reason, undefined);
    await eventually("the alert", () => receiver.callsTo("/own-readings").length >= 1);
    // Refused for want of deposit: a reading below again, no second alert.
    assert.match((await requestSponsorship(t, dapp, ops[2] as UserOperation)).reason ?? "", /^Deposit too small/);
    await sleep(300);
    const calls = receiver.callsTo("/own-readings");
    assert.equal(calls.length, 1);
    const alert = JSON.parse(calls[0]?.body ?? "{}");
    assert.deepEqual(
      [alert.depositWei, alert.outstandingWei, alert.availableWei, alert.thresholdWei],
      [(2n * needed).toString(), (2n * needed).toString(), "0", needed.toString()],
    );
  } finally {
    await t.close();
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
