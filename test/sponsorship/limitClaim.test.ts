import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { decide } from "../../src/sponsorship/decide";
import { type Rule, refuse } from "../../src/sponsorship/rule";
import { spendingLimitRule } from "../../src/sponsorship/rules/spendingLimits";
import { LimitLedger } from "../../src/storage/limitLedger";
import { loadSponsorshipSetup } from "../../src/storage/sponsorshipSetup";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";

let t: TestApp;
let dapp: Dapp;
before(async () => {
  t = await startTestApp();
  dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", {
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    threshold: 1,
    thresholdType: "NATIVE_ASSET",
  });
});
after(() => t.close());

const veto: Rule = { name: "veto", evaluate: () => refuse("veto", "a later rule said no") };
const userOp = (maxFeePerGas: bigint) => ({
  sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as const,
  nonce: 1n,
  initCode: "0x" as const,
  callData: "0x" as const,
  callGasLimit: 100_000n,
  verificationGasLimit: 0n,
  preVerificationGas: 0n,
  maxFeePerGas,
  maxPriorityFeePerGas: 0n,
});

async function ledger() {
  const usage = await t.db.query<{ used: string }>("SELECT used::text AS used FROM limit_usage");
  const held = await t.db.query<{ amount: string }>("SELECT amount::text AS amount FROM limit_reservations");
  return { used: usage.map((r) => r.used), held: held.map((r) => r.amount) };
}

test("a refusal by a later rule gives the reservation back, restoring the one it replaced", async () => {
  const setup = await loadSponsorshipSetup(t.db, dapp.apiKey);
  assert.ok(setup);
  const input = (fee: bigint) => ({
    setup,
    userOp: userOp(fee),
    smartAccount: { name: "BICONOMY", version: "2.0.0" },
    nowMs: Date.now(),
    validUntil: Math.floor(Date.now() / 1000) + 300,
  });
  const limit = spendingLimitRule(new LimitLedger(t.db));

  // A fresh reservation, vetoed: nothing stays reserved.
  const fresh = await decide(input(10n), [limit, veto]);
  assert.equal(fresh.sponsored, false);
  assert.deepEqual(await ledger(), { used: ["0"], held: [] });

  const first = await decide(input(10n), [limit]);
  assert.equal(first.sponsored, true);
  assert.deepEqual(await ledger(), { used: ["1000000"], held: ["1000000"] });

  // The same (sender, nonce) again at a higher fee: reserved as a replacement, then vetoed.
  const vetoed = await decide(input(30n), [limit, veto]);
  assert.deepEqual(vetoed, {
    sponsored: false,
    reason: "a later rule said no",
    outcomes: [
      { rule: "spendingLimits", passed: true },
      { rule: "veto", passed: false, reason: "a later rule said no" },
    ],
  });
  assert.deepEqual(await ledger(), { used: ["1000000"], held: ["1000000"] }, "the first reservation stands");

  // A rule that fails outright releases too.
  const broken: Rule = {
    name: "broken",
    evaluate: () => {
      throw new Error("webhook client crashed");
    },
  };
  await assert.rejects(decide(input(50n), [limit, broken]), /webhook client crashed/);
  assert.deepEqual(await ledger(), { used: ["1000000"], held: ["1000000"] });
});
