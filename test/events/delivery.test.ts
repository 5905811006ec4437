// Delivery of sponsorship.signed to a real HTTP receiver that verifies every delivery with the standardwebhooks
// package: a receiver down for a while then up gets every event once per id, in order; a rotation's grace period signs
// with both secrets, then only the new one; an endpoint failing for a day is turned off and the account alerted, and
// turned on again resumes its queue in order; a replay sends a range again; the attempts are listed, paged.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createMetrics } from "../../src/metrics/metrics";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";
import { userOpV06 } from "../helpers/userOps";
import { addEndpoint, endpointState } from "./helpers";
import { type EventReceiver, startEventReceiver } from "./receiver";

let clockOffsetMs = 0;
const now = () => Date.now() + clockOffsetMs;
let t: TestApp;
const metrics = createMetrics();
const TIMERS = { pollMs: 50, firstRetryMs: 50, maxRetryMs: 200, disableAfterMs: 24 * 60 * 60 * 1000, keepMs: 1e10 };

before(async () => {
  t = await startTestApp({ now, metrics, events: TIMERS, alerts: { deliveryPollMs: 60_000, depositCheckMs: 60_000 } });
});
after(() => t.close());

const receivers: EventReceiver[] = [];
after(async () => {
  for (const receiver of receivers) await receiver.close();
});

async function receiver(): Promise<EventReceiver> {
  const started = await startEventReceiver(now);
  receivers.push(started);
  return started;
}

/** A dApp that sponsors any operation deploying its account. */
async function sponsoringDapp(via: TestApp = t): Promise<Dapp> {
  const dapp = await via.dapp();
  await linkFundingWallet(via, dapp);
  await addPolicy(via, dapp, "WALLET_DEPLOYMENT", {});
  return dapp;
}

let nonce = 0;
const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";

/** Sponsors `count` operations one after the other; returns their user operation hashes, in order. */
async function sponsor(dapp: Dapp, count: number, via: TestApp = t): Promise<void> {
  for (let i = 0; i < count; i++) {
    const reply = await rpc(via, dapp, "pm_sponsorUserOperation", [userOpV06(SENDER, nonce++), { mode: "SPONSORED" }]);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    assert.notEqual((reply.body.result as { paymasterAndData: string }).paymasterAndData, "0x");
  }
}

describe("event delivery", () => {
  test("sponsorship.signed reaches the receiver signed as Standard Webhooks, with the record's figures", async () => {
    const dapp = await sponsoringDapp();
    const to = await receiver();
    const endpoint = await addEndpoint(t, dapp, to.url);
    to.secrets.push(endpoint.secret);
    await sponsor(dapp, 1);
    const [event] = await to.acceptedAtLeast(1);
    assert.ok(event);
    assert.deepEqual(event.verifiedBy, [0], "the standardwebhooks package verifies the delivery");
    assert.equal(event.type, "sponsorship.signed");
    assert.equal(event.sequence, 1);
    assert.match(event.id, /^evt_[0-9a-f]{32}$/);
    assert.equal(event.headers["webhook-id"], event.id);
    const [record] = await t.db.query<{ user_op_hash: string; valid_until: string; worst_case_wei: string }>(
      "SELECT user_op_hash, valid_until::text AS valid_until, worst_case_wei::text AS worst_case_wei FROM sponsorships WHERE paymaster_id = $1 AND sponsored",
      [dapp.paymasterId],
    );
    assert.ok(record);
    assert.deepEqual(
      {
        paymasterId: event.data.paymasterId,
        chainId: event.data.chainId,
        userOpHash: event.data.userOpHash,
        mode: event.data.mode,
        maxCostWei: event.data.maxCostWei,
        validUntil: event.data.validUntil,
      },
      {
        paymasterId: dapp.paymasterId,
        chainId: 31337,
        userOpHash: record.user_op_hash,
        mode: "SPONSORED",
        maxCostWei: record.worst_case_wei,
        validUntil: Number(record.valid_until),
      },
    );
  });

  test("a receiver down for a while, then up, gets every event once per id, in order", async () => {
    const dapp = await sponsoringDapp();
    const to = await receiver();
    to.status = 503;
    const endpoint = await addEndpoint(t, dapp, to.url);
    to.secrets.push(endpoint.secret);
    const count = 12;
    await sponsor(dapp, count);
    // Down: the head is tried again and again, the same id each time, and nothing behind it overtakes it.
    await eventually(
      "the head retried",
      () => to.received.length,
      (n) => n >= 3,
    );
    assert.deepEqual(new Set(to.received.map((event) => event.sequence)), new Set([1]));
    assert.equal(new Set(to.received.map((event) => event.id)).size, 1);
    const state = await endpointState(t, dapp, endpoint.id);
    assert.ok(state.failingSince !== null);
    assert.equal(state.pending, count);

    to.status = 204;
    const accepted = await to.acceptedAtLeast(count);
    await eventually(
      "the queue empty",
      async () => (await endpointState(t, dapp, endpoint.id)).pending,
      (n) => n === 0,
    );
    assert.deepEqual(
      to.accepted().map((event) => event.sequence),
      Array.from({ length: count }, (_, i) => i + 1),
      "in order, each once",
    );
    assert.equal(new Set(accepted.map((event) => event.id)).size, count, "one id per event");
    assert.ok(
      to.received.every((event) => event.verifiedBy.length === 1),
      "every delivery verifies",
    );
    assert.equal((await endpointState(t, dapp, endpoint.id)).failingSince, null);

    // The attempts, newest first, paged.
    const first = await t.call("GET", `event-endpoints/${endpoint.id}/deliveries`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      query: { limit: "5" },
    });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const page = first.body.data as { sequence: number; delivered: boolean; statusCode: number; attempt: number }[];
    assert.equal(page.length, 5);
    assert.deepEqual(
      page.map((attempt) => attempt.sequence),
      [12, 11, 10, 9, 8],
    );
    assert.ok(page.every((attempt) => attempt.delivered && attempt.statusCode === 204));
    const rest: { sequence: number; delivered: boolean; statusCode: number; attempt: number }[] = [];
    for (let cursor = first.body.nextCursor as string | null; cursor; ) {
      const next = await t.call("GET", `event-endpoints/${endpoint.id}/deliveries`, {
        token: dapp.token,
        apiKey: dapp.apiKey,
        query: { limit: "5", cursor },
      });
      rest.push(...(next.body.data as typeof rest));
      cursor = next.body.nextCursor as string | null;
    }
    const failed = rest.filter((attempt) => !attempt.delivered);
    assert.equal(failed.length, to.received.length - count);
    assert.ok(failed.every((attempt) => attempt.statusCode === 503 && attempt.sequence === 1));
    const metrics503 = await metrics.registry.getSingleMetricAsString("paymaster_event_deliveries_total");
    assert.match(metrics503, /outcome="failed"/);
  });

  test("rotation: during the grace period both secrets verify, after it only the new one", async () => {
    const dapp = await sponsoringDapp();
    const to = await receiver();
    const endpoint = await addEndpoint(t, dapp, to.url);
    const rotated = await t.call("POST", `event-endpoints/${endpoint.id}/rotate-secret`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { graceSeconds: 60 },
    });
    const newSecret = (rotated.body.data as { secret: string }).secret;
    to.secrets.push(endpoint.secret, newSecret);
    await sponsor(dapp, 1);
    const [during] = await to.acceptedAtLeast(1);
    assert.deepEqual(during?.verifiedBy, [0, 1], "old and new both verify");
    assert.equal(String(during?.headers["webhook-signature"]).split(" ").length, 2);

    // Past the grace period (by the service's clock; the receiver checks timestamps by the same clock).
    clockOffsetMs += 61_000;
    try {
      await sponsor(dapp, 1);
      const [, later] = await to.acceptedAtLeast(2);
      assert.deepEqual(later?.verifiedBy, [1], "only the new secret verifies");
      assert.equal(String(later?.headers["webhook-signature"]).split(" ").length, 1);
    } finally {
      clockOffsetMs -= 61_000;
    }
  });

  test("an endpoint failing for a day is turned off with an alert; turned on, its queue resumes in order", async () => {
    const dapp = await sponsoringDapp();
    const alertsTo = await receiver();
    const alert = await t.call("PATCH", "paymasterParameters", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: {
        paymasterId: dapp.paymasterId,
        type: "depositAlert",
        thresholdWei: "0",
        url: alertsTo.server.url("/alerts"),
      },
    });
    assert.equal(alert.status, 200, JSON.stringify(alert.body));
    const to = await receiver();
    to.status = 500;
    const endpoint = await addEndpoint(t, dapp, to.url);
    to.secrets.push(endpoint.secret);
    await sponsor(dapp, 3);
    await eventually(
      "failing",
      async () => (await endpointState(t, dapp, endpoint.id)).failingSince,
      (since) => since !== null,
    );
    const failedBefore = to.received.length;
    clockOffsetMs += 24 * 60 * 60 * 1000;
    try {
      const off = await eventually(
        "turned off",
        () => endpointState(t, dapp, endpoint.id),
        (state) => !state.enabled,
      );
      assert.match(off.disabledReason ?? "", /^every delivery failed since .* \(last: status 500\)$/);
      assert.equal(off.pending, 3, "its queue is kept");
      const [queued] = await t.db.query<{ body: string }>(
        "SELECT body FROM alert_outbox WHERE paymaster_id = $1 AND event = 'endpoint.disabled'",
        [dapp.paymasterId],
      );
      assert.ok(queued, "the account's alert is queued");
      assert.equal(JSON.parse(queued.body).endpointId, endpoint.id);
      assert.ok(to.received.length > failedBefore);
    } finally {
      clockOffsetMs -= 24 * 60 * 60 * 1000;
    }

    to.status = 200;
    const on = await t.call("PATCH", `event-endpoints/${endpoint.id}`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { enabled: true },
    });
    assert.equal(on.status, 200);
    const accepted = await to.acceptedAtLeast(3);
    assert.deepEqual(
      accepted.map((event) => event.sequence),
      [1, 2, 3],
    );
  });

  test("a replay sends a range's events again after what is queued, with their ids and new numbers", async () => {
    const dapp = await sponsoringDapp();
    const to = await receiver();
    const endpoint = await addEndpoint(t, dapp, to.url);
    to.secrets.push(endpoint.secret);
    const from = now();
    await sponsor(dapp, 2);
    const firstTwo = await to.acceptedAtLeast(2);
    const replay = await t.call("POST", `event-endpoints/${endpoint.id}/replay`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { from, to: now() + 1 },
    });
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.deepEqual(replay.body.data, { queued: 2 });
    const all = await to.acceptedAtLeast(4);
    assert.deepEqual(
      all.map((event) => event.sequence),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      all.slice(2).map((event) => event.id),
      firstTwo.map((event) => event.id),
    );
    const backwards = await t.call("POST", `event-endpoints/${endpoint.id}/replay`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { from: 10, to: 5 },
    });
    assert.equal(backwards.status, 400);
    assert.equal(backwards.body.message, "from must not be after to");

    // One event again, by its id (the dashboard's button on a delivery).
    const one = await t.call("POST", `event-endpoints/${endpoint.id}/replay`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { eventId: firstTwo[1]?.id },
    });
    assert.equal(one.status, 200, JSON.stringify(one.body));
    assert.deepEqual(one.body.data, { queued: 1 });
    const [fifth] = (await to.acceptedAtLeast(5)).slice(4);
    assert.deepEqual({ id: fifth?.id, sequence: fifth?.sequence }, { id: firstTwo[1]?.id, sequence: 5 });
    for (const [body, message] of [
      [{ eventId: `evt_${"0".repeat(32)}` }, "eventId names no event of this paymaster"],
      [{ eventId: "evt_1" }, "eventId must be an event's id: evt_ and 32 hex digits"],
      [{ from: 1 }, "from and to are required, or eventId"],
    ] as const) {
      const refused = await t.call("POST", `event-endpoints/${endpoint.id}/replay`, {
        token: dapp.token,
        apiKey: dapp.apiKey,
        body,
      });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.message, message);
    }
  });

  test("an endpoint not subscribed to an event, or turned off, gets nothing of it; another endpoint still does", async () => {
    const dapp = await sponsoringDapp();
    const quiet = await receiver();
    const off = await receiver();
    const on = await receiver();
    await addEndpoint(t, dapp, quiet.url, ["sponsorship.included"]);
    const offEndpoint = await addEndpoint(t, dapp, off.url);
    await t.call("PATCH", `event-endpoints/${offEndpoint.id}`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { enabled: false },
    });
    const onEndpoint = await addEndpoint(t, dapp, on.url);
    on.secrets.push(onEndpoint.secret);
    await sponsor(dapp, 1);
    await on.acceptedAtLeast(1);
    // Nothing was queued for the other two: the one delivery of the paymaster is the enabled subscriber's.
    const queued = await t.db.query<{ endpoint_id: string }>(
      `SELECT d.endpoint_id::text AS endpoint_id FROM event_deliveries d JOIN event_endpoints e ON e.id = d.endpoint_id
       WHERE e.paymaster_id = $1`,
      [dapp.paymasterId],
    );
    assert.deepEqual(
      queued.map((row) => row.endpoint_id),
      [onEndpoint.id],
    );
    assert.equal(quiet.received.length + off.received.length, 0);
  });
});
