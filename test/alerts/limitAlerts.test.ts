// limit.reached: one alert per spending limit and cycle however many operations it refuses at once, another in the
// next cycle; delivered to a real HTTP receiver, signed like the webhooks, tried again after a 500, given up after an
// hour, and never in the way of a sponsorship when the receiver does not answer.
import assert from "node:assert/strict";
import type { ServerResponse } from "node:http";
import { after, before, test } from "node:test";
import { generatePrivateKey } from "viem/accounts";
import { ALERT_RETRY_WINDOW_MS } from "../../src/alerts/delivery";
import { Secret } from "../../src/config";
import { createMetrics } from "../../src/metrics/metrics";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { testLookup } from "../helpers/dns";
import { eventually } from "../helpers/eventually";
import { captureLog } from "../helpers/logCapture";
import { userOpV06 } from "../helpers/userOps";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";
import { outboxOf, received, setAlerts, signedWith, webhookSecretOf } from "./helpers";

let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;
let t: TestApp;
let receiver: WebhookServer;
const metrics = createMetrics();
const log = captureLog();

before(async () => {
  receiver = await startWebhookServer();
  receiver.on("/ok", (_request, response) => {
    response.writeHead(204);
    response.end();
  });
  t = await startTestApp(
    {
      now,
      metrics,
      alerts: { deliveryPollMs: 50, depositCheckMs: 60_000 },
      // Long enough that the receiver that never answers is still holding the call when the test looks.
      webhooks: {
        allowPrivate: true,
        timeoutMs: 30_000,
        signingKey: new Secret(generatePrivateKey()),
        lookup: testLookup,
      },
    },
    log.logger,
  );
});
after(async () => {
  // The receiver first: it cuts the call that never answers, so the app's close does not wait for its timeout.
  await receiver.close();
  await t.close();
});

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const op = (nonce: number) => userOpV06(SENDER, nonce);
let nonce = 0;
const sponsor = async (dapp: Dapp, via: TestApp = t) => {
  const reply = await rpc(via, dapp, "pm_sponsorUserOperation", [op(nonce++), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: string; reason?: string };
};

/** A dApp whose COUNT limit allows `threshold` operations an hour, its alerts going to `path` of the receiver. */
async function limitedDapp(path: string | null, threshold = 1, via: TestApp = t) {
  const dapp = await via.dapp();
  await linkFundingWallet(via, dapp);
  await addPolicy(via, dapp, "WALLET_DEPLOYMENT", {});
  const policyId = await addPolicy(
    via,
    dapp,
    "PAYMASTER_SA_LIMIT",
    { type: "PAYMASTER", cycleDuration: { value: 1, unit: "hour" }, threshold, thresholdType: "COUNT" },
    "hourly cap",
  );
  if (path !== null) await setAlerts(via, dapp, receiver.url(path));
  return { dapp, policyId };
}

/**
 * Runs `work` on `count` services of their own on the test's database (each with its own memory of the alerts it
 * queued), for a test that counts what did not come. `settled` closes them, which waits for the refusals they handed
 * to their alerts to be decided and for the delivery passes those started: whatever they were going to queue or send
 * has been by then. They are closed at the end in any case; `t` stays up for the other tests.
 */
async function onOwnInstances(
  count: number,
  work: (instances: TestApp[], settled: () => Promise<void>) => Promise<void>,
): Promise<void> {
  const instances: TestApp[] = [];
  let closing: Promise<void> | undefined;
  const settled = () => {
    closing ??= Promise.all(instances.map((instance) => instance.close())).then(() => {});
    return closing;
  };
  try {
    for (let i = 0; i < count; i++) instances.push(await startTestApp({ ...t.ctx, db: t.db }));
    await work(instances, settled);
  } finally {
    await settled();
  }
}

const count = async (event: string, outcome: string) =>
  (await metrics.alerts.get()).values.find((v) => v.labels.event === event && v.labels.outcome === outcome)?.value ?? 0;

test("concurrent refusals in one cycle: exactly one limit.reached, signed; the next cycle's first refusal: another", () =>
  onOwnInstances(1, async ([own], settled) => {
    assert.ok(own);
    const { dapp, policyId } = await limitedDapp("/ok");
    const secret = await webhookSecretOf(t, dapp);
    assert.notEqual((await sponsor(dapp, own)).paymasterAndData, "0x");
    const refused = await Promise.all(Array.from({ length: 8 }, () => sponsor(dapp, own)));
    for (const answer of refused) assert.match(answer.reason ?? "", /^Spending limit "hourly cap" .* reached/);

    await received(receiver, "/ok", 1, "the first alert");
    // More refusals in the same cycle: none alerts again (counted once the service has settled, below).
    await Promise.all(Array.from({ length: 3 }, () => sponsor(dapp, own)));
    const [first] = receiver.callsTo("/ok");
    assert.ok(first);
    assert.equal(first.method, "POST");
    assert.equal(first.headers["content-type"], "application/json");
    assert.ok(signedWith(secret, first, now()), "signed with the account's webhook secret");
    const alert = JSON.parse(first.body);
    const cycleStart = alert.cycleStart;
    assert.deepEqual(
      { ...alert, at: typeof alert.at, cycleStart: typeof cycleStart },
      {
        event: "limit.reached",
        paymasterId: dapp.paymasterId,
        chainId: 31337,
        policyId,
        policyName: "hourly cap",
        cycleStart: "string",
        reason: refused[0]?.reason,
        at: "string",
      },
    );
    assert.ok(Date.parse(alert.at) >= Date.parse(cycleStart));

    // The next cycle: room again, then a refusal, then one more alert.
    clockOffsetMs += 60 * 60 * 1000;
    assert.notEqual((await sponsor(dapp, own)).paymasterAndData, "0x");
    await Promise.all(Array.from({ length: 4 }, () => sponsor(dapp, own)));
    await received(receiver, "/ok", 2, "the next cycle's alert");
    await settled();
    // Either service's delivery poll may be the one marking the second alert sent.
    const rows = await eventually(
      "both alerts marked sent",
      () => outboxOf(t, dapp.paymasterId),
      (queued) => queued.every((row) => row.state === "sent"),
    );
    assert.deepEqual(
      rows.map((row) => [row.event, row.state, row.attempts]),
      [
        ["limit.reached", "sent", 1],
        ["limit.reached", "sent", 1],
      ],
      "one alert per cycle",
    );
    const calls = receiver.callsTo("/ok");
    assert.equal(calls.length, 2);
    // Dated by the service's clock, now an hour past the wall clock: fresh to a receiver on the service's time, too
    // old (by more than five minutes) to one on the wall clock.
    const [, next] = calls;
    assert.ok(next);
    assert.ok(signedWith(secret, next, now()), "the next cycle's alert, signed");
    assert.equal(signedWith(secret, next, Date.now()), false);
    const second = JSON.parse(calls[1]?.body ?? "{}");
    assert.equal(second.policyId, policyId);
    assert.equal(Date.parse(second.cycleStart) - Date.parse(cycleStart), 60 * 60 * 1000);
    assert.ok((await count("limit.reached", "sent")) >= 2);
  }));

test("alerts set in the middle of a cycle apply to its next refusal at once; turned off, none", () =>
  onOwnInstances(1, async ([own], settled) => {
    assert.ok(own);
    receiver.on("/later", (_request, response) => {
      response.writeHead(200);
      response.end();
    });
    const { dapp } = await limitedDapp(null, 1, own);
    await sponsor(dapp, own);
    assert.ok((await sponsor(dapp, own)).reason, "refused while no alerts are set");
    await setAlerts(own, dapp, receiver.url("/later"));
    assert.ok((await sponsor(dapp, own)).reason);
    await received(receiver, "/later", 1, "the alert");

    const off = await own.call("PATCH", "paymasterParameters", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei: "0", url: null },
    });
    assert.equal(off.status, 200);
    clockOffsetMs += 60 * 60 * 1000;
    await sponsor(dapp, own);
    assert.ok((await sponsor(dapp, own)).reason, "the next cycle's refusal");
    await settled();
    assert.equal(receiver.callsTo("/later").length, 1);
    assert.equal((await outboxOf(t, dapp.paymasterId)).length, 1);
  }));

test("two instances on one database refusing at once: still one limit.reached", () =>
  onOwnInstances(2, async ([one, two], settled) => {
    assert.ok(one && two);
    const { dapp } = await limitedDapp("/two-instances");
    receiver.on("/two-instances", (_request, response) => {
      response.writeHead(200);
      response.end();
    });
    assert.notEqual((await sponsor(dapp, one)).paymasterAndData, "0x");
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => sponsor(dapp, i % 2 ? two : one)));
    assert.ok(answers.every((answer) => answer.reason !== undefined));
    await received(receiver, "/two-instances", 1, "the alert");
    await settled();
    assert.equal((await outboxOf(t, dapp.paymasterId)).length, 1);
    assert.equal(receiver.callsTo("/two-instances").length, 1);
  }));

test("a receiver that answers 500 first gets the same alert again, and the alert is then sent", async () => {
  let answered = 0;
  receiver.on("/flaky", (_request, response: ServerResponse) => {
    response.writeHead(answered++ === 0 ? 500 : 200, { "content-type": "application/json" });
    response.end("{}");
  });
  const retriedBefore = await count("limit.reached", "retried");
  const { dapp } = await limitedDapp("/flaky");
  await sponsor(dapp);
  assert.ok((await sponsor(dapp)).reason);
  // The first retry waits 1 s.
  await received(receiver, "/flaky", 2, "the retry");
  await eventually(
    "the alert marked sent",
    async () => (await outboxOf(t, dapp.paymasterId))[0]?.state,
    (state) => state === "sent",
  );
  const [first, second, ...more] = receiver.callsTo("/flaky");
  assert.equal(more.length, 0);
  assert.equal(second?.body, first?.body, "the same alert");
  assert.deepEqual(
    (await outboxOf(t, dapp.paymasterId)).map((row) => [row.state, row.attempts, row.last_error]),
    [["sent", 2, null]],
  );
  assert.equal((await count("limit.reached", "retried")) - retriedBefore, 1);
});

test("a receiver that keeps failing: tried with backoff, given up after an hour, logged without the url's secret", async () => {
  const { dapp } = await limitedDapp("/status-500?token=sekrit");
  await sponsor(dapp);
  assert.ok((await sponsor(dapp)).reason);
  await received(receiver, "/status-500", 1, "the first attempt");
  await eventually(
    "the retry scheduled",
    async () => (await outboxOf(t, dapp.paymasterId))[0]?.last_error,
    (error) => typeof error === "string",
  );
  assert.equal((await outboxOf(t, dapp.paymasterId))[0]?.state, "pending");
  const failedBefore = await count("limit.reached", "failed");
  // Past the hour: the next attempt is the last.
  clockOffsetMs += ALERT_RETRY_WINDOW_MS;
  await eventually(
    "given up",
    async () => (await outboxOf(t, dapp.paymasterId))[0]?.state,
    (state) => state === "failed",
  );
  const [row] = await outboxOf(t, dapp.paymasterId);
  assert.equal(row?.last_error, "status 500");
  assert.ok((row?.attempts ?? 0) >= 2);
  assert.equal((await count("limit.reached", "failed")) - failedBefore, 1);
  const givenUp = log.entries().filter((e) => e.msg === "alert given up: not delivered within an hour");
  assert.equal(givenUp.length, 1);
  assert.equal(givenUp[0]?.host, `127.0.0.1:${receiver.port}`);
  assert.doesNotMatch(log.text(), /sekrit/);
});

test("a receiver that never answers holds its call while sponsorships go on being answered", async () => {
  const { dapp } = await limitedDapp("/slow", 3);
  await sponsor(dapp);
  await sponsor(dapp);
  await sponsor(dapp);
  assert.ok((await sponsor(dapp)).reason);
  await eventually(
    "the alert call",
    () => receiver.callsTo("/slow").length,
    (calls) => calls === 1,
  );
  // The call is open (the receiver never answers, the timeout is 30 s): sponsorships of this and another dApp are
  // answered meanwhile, refused or signed.
  const other = await t.dapp();
  await linkFundingWallet(t, other);
  await addPolicy(t, other, "WALLET_DEPLOYMENT", {});
  const answers = await Promise.all([sponsor(dapp), sponsor(dapp), sponsor(other), sponsor(other)]);
  assert.deepEqual(
    answers.map((a) => a.reason === undefined),
    [false, false, true, true],
  );
  const [row] = await outboxOf(t, dapp.paymasterId);
  assert.deepEqual([row?.state, row?.attempts, row?.last_error], ["pending", 1, null], "still the first attempt");
  assert.equal(receiver.callsTo("/slow").length, 1);
});
