// Two instances on one database (two connection pools on one PostgreSQL schema; one PGlite on the embedded pass)
// deliver each event once between them, in order: each endpoint's queue is one instance's at a time (its lease, taken
// with FOR UPDATE SKIP LOCKED), whichever instance recorded the sponsorship.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Dapp, startTwoInstances, type TwoInstances } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";
import { addEndpoint } from "./helpers";
import { type EventReceiver, startEventReceiver } from "./receiver";

const TIMERS = { pollMs: 20, firstRetryMs: 50, maxRetryMs: 200, disableAfterMs: 86_400_000, keepMs: 1e10 };
let two: TwoInstances;
let to: EventReceiver;

before(async () => {
  two = await startTwoInstances({ events: TIMERS });
  to = await startEventReceiver();
});
after(async () => {
  await to.close();
  await two.close();
});

test("two instances deliver each event once between them, in order", async () => {
  const { a, b } = two;
  const dapp: Dapp = await a.dapp();
  await linkFundingWallet(a, dapp);
  await addPolicy(a, dapp, "WALLET_DEPLOYMENT", {});
  const endpoint = await addEndpoint(a, dapp, to.url);
  to.secrets.push(endpoint.secret);
  const count = 40;
  const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
  // Both instances record sponsorships at once; both hear of every queued delivery and race to deliver it.
  await Promise.all(
    Array.from({ length: count }, async (_, nonce) => {
      const reply = await rpc(nonce % 2 === 0 ? a : b, dapp, "pm_sponsorUserOperation", [
        userOpV06(SENDER, nonce),
        { mode: "SPONSORED" },
      ]);
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
    }),
  );
  const accepted = await to.acceptedAtLeast(count);
  // Both instances are idle once the queue is empty: no delivery is left under way to come twice later.
  await Promise.all([a, b].map((instance) => instance.app.close()));
  assert.equal(to.received.length, count, "each event delivered once");
  assert.equal(new Set(accepted.map((event) => event.id)).size, count);
  assert.deepEqual(
    accepted.map((event) => event.sequence),
    Array.from({ length: count }, (_, i) => i + 1),
  );
  assert.ok(accepted.every((event) => event.verifiedBy.length === 1));
});
