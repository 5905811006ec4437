// The TIME_WINDOW rule through pm_sponsorUserOperation, on the service's injected clock: refused before the window
// opens and after it closes, with the reason saying when, and sponsored inside it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { size } from "viem";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

const START = Date.UTC(2027, 0, 1);
const END = Date.UTC(2027, 1, 1);
let clockMs = START - 60_000;
let t: TestApp;
before(async () => {
  t = await startTestApp({ now: () => clockMs });
});
after(() => t.close());

const op = (nonce: number) => userOpV06("0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4", nonce);
const sponsor = async (dapp: Dapp, nonce: number) => {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [op(nonce), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: string; reason?: string };
};

test("before the window: refused saying when it opens; inside: sponsored; at its end: refused saying it closed", async () => {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "TIME_WINDOW", { startTimeInEpoch: START, endTimeInEpoch: END }, "launch");

  const early = await sponsor(dapp, 0);
  assert.equal(early.paymasterAndData, "0x");
  const opens = `Sponsorship window "launch" opens at 2027-01-01T00:00:00.000Z (${START}); it is now 2026-12-31T23:59:00.000Z`;
  assert.equal(early.reason, opens);
  const [record] = await listSponsorships(t.db, dapp.paymasterId);
  assert.deepEqual(record?.rule_outcomes.at(-1), { rule: "timeWindow", passed: false, reason: opens });

  clockMs = START;
  const inside = await sponsor(dapp, 1);
  assert.equal(inside.reason, undefined);
  assert.equal(size(inside.paymasterAndData as `0x${string}`), 276);

  clockMs = END;
  const late = await sponsor(dapp, 2);
  assert.equal(late.paymasterAndData, "0x");
  assert.equal(
    late.reason,
    `Sponsorship window "launch" closed at 2027-02-01T00:00:00.000Z (${END}); it is now 2027-02-01T00:00:00.000Z`,
  );
});
