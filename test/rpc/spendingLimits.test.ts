import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { size } from "viem";
import { worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import { etherToWei } from "../../src/sponsorship/spendingLimit";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, fundedDapp, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS, userOpV06 } from "../helpers/userOps";

// The service's clock, for sponsorship decisions and the cycles the management API starts; tests move it.
let clockOffsetMs = 0;
let t: TestApp;
before(async () => {
  t = await startTestApp({ now: () => Date.now() + clockOffsetMs });
});
after(() => t.close());

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const COST = worstCaseCostWei(PLAIN_GAS); // (100k + 3·50k + 40k) gas at 1 gwei = 0.00029 ETH

const op = (nonce: number | bigint, sender = SENDER, overrides: Record<string, string> = {}) =>
  userOpV06(sender, nonce, overrides);
// callData 0x with no whitelisted contract and no initCode passes rules 2 and 3, so only the limits decide.
const sponsor = async (dapp: Dapp, userOp: ReturnType<typeof op>) => {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp, { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: string; reason?: string };
};
const sponsored = (result: { paymasterAndData: string }) =>
  result.paymasterAndData !== "0x" && size(result.paymasterAndData as `0x${string}`) === 276;

async function dappWithLimit(policyData: Record<string, unknown>) {
  // The deployment policy keeps rule 1 satisfied while the limit is paused.
  const dapp = await fundedDapp(t, { walletDeployment: true });
  const policyId = await addPolicy(
    t,
    dapp,
    "PAYMASTER_SA_LIMIT",
    { cycleDuration: { value: 1, unit: "hour" }, ...policyData },
    "cap",
  );
  return { dapp, policyId };
}

const usage = async (dapp: Dapp) => {
  const reply = await t.call("GET", "paymaster-policy/usage", { token: dapp.token, apiKey: dapp.apiKey });
  assert.equal(reply.status, 200);
  return reply.body.data as Record<string, unknown>[];
};

describe("COUNT limits", () => {
  test("PAYMASTER: exactly the threshold is sponsored, then a refusal naming the limit and its usage", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 3, thresholdType: "COUNT" });
    const results = [];
    for (let nonce = 0; nonce < 5; nonce++) results.push(await sponsor(dapp, op(nonce)));
    assert.deepEqual(results.map(sponsored), [true, true, true, false, false]);
    assert.equal(
      results[3]?.reason,
      'Spending limit "cap" (PAYMASTER, COUNT) reached: 3 of 3 user operations used in the current cycle',
    );
    const [row] = await usage(dapp);
    assert.deepEqual([row?.used, row?.remaining, row?.type], ["3", "0", "PAYMASTER"]);
    const records = await listSponsorships(t.db, dapp.paymasterId);
    const refused = records.filter((r) => !r.sponsored);
    assert.equal(refused.length, 2);
    assert.deepEqual(refused[0]?.rule_outcomes.at(-1), {
      rule: "spendingLimits",
      passed: false,
      reason: results[3]?.reason,
    });
  });

  test("a repeated (sender, nonce) replaces its reservation instead of adding to it", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 2, thresholdType: "COUNT" });
    for (let i = 0; i < 5; i++) assert.ok(sponsored(await sponsor(dapp, op(7))), `repeat ${i}`);
    assert.equal((await usage(dapp))[0]?.used, "1");
    assert.ok(sponsored(await sponsor(dapp, op(8))));
    assert.ok(!sponsored(await sponsor(dapp, op(9))));
    assert.ok(sponsored(await sponsor(dapp, op(8))), "a repeat of a reserved nonce still fits when the limit is full");
  });

  test("SMART_ACCOUNT: per sender", async () => {
    const { dapp } = await dappWithLimit({ type: "SMART_ACCOUNT", threshold: 1, thresholdType: "COUNT" });
    const other = "0x00000000000000000000000000000000000000aa";
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    const second = await sponsor(dapp, op(2));
    assert.ok(!sponsored(second));
    assert.match(second.reason ?? "", /1 of 1 user operations used in the current cycle by sender 0x4df23b78/);
    assert.ok(sponsored(await sponsor(dapp, op(1, other))));
    const [row] = await usage(dapp);
    assert.deepEqual(row?.senders, [
      { sender: other, used: "1", remaining: "0" },
      { sender: SENDER.toLowerCase(), used: "1", remaining: "0" },
    ]);
  });
});

describe("NATIVE_ASSET limits", () => {
  test("reserve the worst-case cost (callGas + 3·verificationGas + preVerificationGas) × maxFeePerGas", async () => {
    assert.equal(COST, 290_000n * 1_000_000_000n);
    // Room for two operations and a half: the third does not fit.
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 0.000725, thresholdType: "NATIVE_ASSET" });
    assert.equal(etherToWei(0.000725), (COST * 5n) / 2n);
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    assert.ok(sponsored(await sponsor(dapp, op(2))));
    const third = await sponsor(dapp, op(3));
    assert.equal(
      third.reason,
      'Spending limit "cap" (PAYMASTER, NATIVE_ASSET) reached: 0.00058 of 0.000725 ETH used in the current cycle; this operation may cost up to 0.00029 ETH',
    );
    // A cheaper operation (a lower fee cap) still fits in what is left: 0.000145 ETH at 0.5 gwei.
    assert.ok(sponsored(await sponsor(dapp, op(3, SENDER, { maxFeePerGas: "500000000" }))));
    assert.equal((await usage(dapp))[0]?.used, "0.000725");
  });

  test("a repeat of the same (sender, nonce) with other gas values reserves only the difference", async () => {
    const { dapp } = await dappWithLimit({ type: "SMART_ACCOUNT", threshold: 0.001, thresholdType: "NATIVE_ASSET" });
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    assert.ok(sponsored(await sponsor(dapp, op(1, SENDER, { maxFeePerGas: "2000000000" }))));
    const [row] = await usage(dapp);
    assert.deepEqual(row?.senders, [{ sender: SENDER.toLowerCase(), used: "0.00058", remaining: "0.00042" }]);
    assert.ok(sponsored(await sponsor(dapp, op(2))), "0.00042 left: 0.00029 fits once");
    assert.ok(!sponsored(await sponsor(dapp, op(3))), "0.00013 left: not a second time");
  });

  test("an operation that alone costs more than the threshold is refused and reserves nothing", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 0.0001, thresholdType: "NATIVE_ASSET" });
    const result = await sponsor(dapp, op(1));
    assert.match(
      result.reason ?? "",
      /0 of 0\.0001 ETH used in the current cycle; this operation may cost up to 0\.00029 ETH/,
    );
    assert.equal((await usage(dapp))[0]?.used, "0");
  });
});

describe("cycles", () => {
  test("a new cycle starts value×unit after the anchor, and the usage starts again from zero", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 1, thresholdType: "COUNT" });
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    assert.ok(!sponsored(await sponsor(dapp, op(2))));
    clockOffsetMs = 3_600_000 + 1_000;
    try {
      assert.ok(sponsored(await sponsor(dapp, op(2))), "the next hour is a new cycle");
      assert.ok(!sponsored(await sponsor(dapp, op(3))));
      const [row] = await usage(dapp);
      assert.equal(row?.used, "1");
    } finally {
      clockOffsetMs = 0;
    }
  });

  test("a limit update restarts the cycle and clears its usage; pause and resume do not", async () => {
    const { dapp, policyId } = await dappWithLimit({ type: "PAYMASTER", threshold: 2, thresholdType: "COUNT" });
    const auth = { token: dapp.token, apiKey: dapp.apiKey };
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    assert.ok(sponsored(await sponsor(dapp, op(2))));
    assert.ok(!sponsored(await sponsor(dapp, op(3))));

    // Paused: the rule is not evaluated, and nothing is counted while it is paused.
    await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, auth);
    assert.ok(sponsored(await sponsor(dapp, op(3))));
    await t.call("PATCH", `paymaster-policy/activate/${policyId}`, auth);
    assert.ok(!sponsored(await sponsor(dapp, op(4))), "resuming keeps the cycle and its usage");
    assert.equal((await usage(dapp))[0]?.used, "2");

    clockOffsetMs += 5;
    const update = await t.call("PATCH", `paymaster-policy/limit/${policyId}`, { ...auth, body: { threshold: 1 } });
    assert.equal(update.status, 200);
    assert.equal((await usage(dapp))[0]?.used, "0", "the update cleared the usage");
    assert.ok(sponsored(await sponsor(dapp, op(4))), "the new limit applies from the update");
    assert.ok(!sponsored(await sponsor(dapp, op(5))));
  });
});

describe("several limits", () => {
  test("all or nothing: when one limit refuses, the others keep no reservation", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 10, thresholdType: "COUNT" });
    await addPolicy(
      t,
      dapp,
      "PAYMASTER_SA_LIMIT",
      { type: "SMART_ACCOUNT", cycleDuration: { value: 1, unit: "day" }, threshold: 1, thresholdType: "COUNT" },
      "per user",
    );
    assert.ok(sponsored(await sponsor(dapp, op(1))));
    const refused = await sponsor(dapp, op(2));
    assert.match(refused.reason ?? "", /Spending limit "per user" \(SMART_ACCOUNT, COUNT\) reached/);
    const rows = await usage(dapp);
    const global = rows.find((row) => row.name === "cap");
    assert.equal(global?.used, "1", "the refused operation was not counted by the limit that had room");
  });
});

describe("usage endpoint", () => {
  test("needs the dApp's authToken and apiKey", async () => {
    const { dapp } = await dappWithLimit({ type: "PAYMASTER", threshold: 1, thresholdType: "COUNT" });
    const other = await t.dapp();
    for (const auth of [{ token: dapp.token }, { token: other.token, apiKey: dapp.apiKey }]) {
      const reply = await t.call("GET", "paymaster-policy/usage", auth);
      assert.deepEqual([reply.status, reply.body.message], [401, "Auth token and API key is required in the headers"]);
    }
    const rows = await usage(dapp);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.durationInMs, 3_600_000);
  });
});
