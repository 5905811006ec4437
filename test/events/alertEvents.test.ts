// Today's alerts as events: limit.reached to an endpoint subscribed to it, with no alert URL set, once per limit and
// cycle; deposit.low to an endpoint beside the alert URL when the deposit crosses the alert settings' threshold.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { noteDepositFigure } from "../../src/storage/alerts";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";
import { addEndpoint } from "./helpers";
import { type EventReceiver, startEventReceiver } from "./receiver";

let t: TestApp;
let to: EventReceiver;

before(async () => {
  t = await startTestApp({ alerts: { deliveryPollMs: 50, depositCheckMs: 60_000 } });
  to = await startEventReceiver();
});
after(async () => {
  await to.close();
  await t.close();
});

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
let nonce = 0;
const sponsor = async (dapp: Dapp) => {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [userOpV06(SENDER, nonce++), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: string; reason?: string };
};

test("limit.reached reaches an endpoint subscribed to it, with no alert URL set, once per limit and cycle", async () => {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  const policyId = await addPolicy(
    t,
    dapp,
    "PAYMASTER_SA_LIMIT",
    { type: "PAYMASTER", cycleDuration: { value: 1, unit: "hour" }, threshold: 1, thresholdType: "COUNT" },
    "hourly cap",
  );
  const endpoint = await addEndpoint(t, dapp, to.url, ["limit.reached"]);
  to.secrets.push(endpoint.secret);
  assert.notEqual((await sponsor(dapp)).paymasterAndData, "0x");
  const refused = await Promise.all(Array.from({ length: 4 }, () => sponsor(dapp)));
  assert.ok(refused.every((answer) => answer.paymasterAndData === "0x"));
  const [event] = await to.acceptedAtLeast(1);
  assert.equal(event?.type, "limit.reached");
  assert.deepEqual(event?.verifiedBy, [to.secrets.indexOf(endpoint.secret)]);
  assert.equal(event?.data.policyId, policyId);
  assert.equal(event?.data.policyName, "hourly cap");
  assert.match(String(event?.data.reason), /^Spending limit "hourly cap" .* reached/);
  // Once per cycle: the event is queued with the limit's mark for the cycle, which the later refusals find taken, so
  // the endpoint's queue can never hold a second one.
  const rows = await t.db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM event_deliveries WHERE endpoint_id = $1",
    [endpoint.id],
  );
  assert.equal(rows[0]?.n, "1");
});

test("deposit.low goes to the alert URL and, as an event, to an endpoint subscribed to it", async () => {
  const dapp = await t.dapp();
  const set = await t.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei: "100", url: to.server.url("/alert") },
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const endpoint = await addEndpoint(t, dapp, to.url, ["deposit.low"]);
  to.secrets.push(endpoint.secret);
  const before = to.accepted().length;
  const queued = await noteDepositFigure(t.db, {
    paymasterId: dapp.paymasterId,
    chainId: 31337,
    paymasterAddress: "0x00000000000000000000000000000000000000aa",
    entryPointVersion: "0.6",
    depositWei: 150n,
    outstandingWei: 60n,
    at: new Date(t.ctx.now()).toISOString(),
    nowMs: t.ctx.now(),
  });
  assert.equal(queued, true);
  const accepted = await to.acceptedAtLeast(before + 1);
  const event = accepted.at(-1);
  assert.equal(event?.type, "deposit.low");
  assert.deepEqual(
    {
      depositWei: event?.data.depositWei,
      outstandingWei: event?.data.outstandingWei,
      availableWei: event?.data.availableWei,
      thresholdWei: event?.data.thresholdWei,
      verifyingPaymaster: event?.data.verifyingPaymaster,
    },
    {
      depositWei: "150",
      outstandingWei: "60",
      availableWei: "90",
      thresholdWei: "100",
      verifyingPaymaster: "0x00000000000000000000000000000000000000aa",
    },
  );
  assert.equal(event?.verifiedBy.length, 1);
});
