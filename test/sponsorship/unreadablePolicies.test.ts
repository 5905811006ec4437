// A rule whose stored settings cannot be read as its kind's (written by hand in the database, or by an older version):
// storage reads it once, naming the field; sponsorship then refuses every operation with a reason naming the rule
// (fail-closed: never sponsoring without a rule it cannot read), at the stub too; the management API still lists it
// as stored and lets the dApp replace it or turn it off, after which sponsorship works again.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "viem";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import type { PolicyType } from "../../src/schemas/management/policyKinds";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { storedPolicy } from "../helpers/policies";
import { userOpV07 } from "../helpers/userOps";

describe("reading a stored rule's settings", () => {
  const cases: { name: string; policyType: PolicyType; data: unknown; problem: string }[] = [
    {
      name: "a cost cap in a unit the service does not know",
      policyType: "MAX_COST_PER_OP",
      data: { threshold: 5, thresholdType: "EUR" },
      problem: "policyData.thresholdType must be one of NATIVE_ASSET, USD",
    },
    {
      name: "a cost cap without a threshold",
      policyType: "MAX_COST_PER_OP",
      data: { thresholdType: "NATIVE_ASSET" },
      problem: "policyData.threshold is required",
    },
    {
      name: "a window with no bound at all",
      policyType: "TIME_WINDOW",
      data: {},
      problem: "policyData needs startTimeInEpoch, endTimeInEpoch or both",
    },
    {
      name: "a window with something else than its bounds",
      policyType: "TIME_WINDOW",
      data: { startsAt: 5 },
      problem: "policyData.startsAt is not a field it takes",
    },
    {
      name: "a window whose bound is a date text",
      policyType: "TIME_WINDOW",
      data: { startTimeInEpoch: "2027-01-01" },
      problem: "policyData.startTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
    },
    {
      name: "a sender list with a number among its addresses",
      policyType: "SENDER_ALLOWLIST",
      data: { addresses: ["0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4", 42] },
      problem: "policyData.addresses[1] must be a 20-byte hex address",
    },
    {
      name: "a sender list without addresses",
      policyType: "SENDER_BLOCKLIST",
      data: {},
      problem: "policyData.addresses is required",
    },
    {
      name: "a spending limit whose cycle is still text",
      policyType: "PAYMASTER_SA_LIMIT",
      data: { type: "PAYMASTER", cycleDuration: "1 day", thresholdType: "COUNT", threshold: 5 },
      problem: "policyData.cycleDuration must be a JSON object",
    },
    {
      name: "a webhook rule whose settings are not an object",
      policyType: "WEBHOOK",
      data: "https://hooks.example.com",
      problem: "policyData must be a JSON object",
    },
    {
      name: "a kind of rule this service does not know",
      policyType: "GAS_PRICE_CAP" as PolicyType,
      data: {},
      problem: "policyType GAS_PRICE_CAP is not a kind of rule this service knows",
    },
  ];
  for (const { name, policyType, data, problem } of cases) {
    test(`${name}: unreadable, with the field named`, () => {
      const policy = storedPolicy(policyType, data, "broken");
      assert.equal(policy.unreadable, problem);
      assert.deepEqual(policy.policyData, data, "kept as stored");
    });
  }

  test("settings as the API stores them read as their kind's", () => {
    const policy = storedPolicy("TIME_WINDOW", { startTimeInEpoch: 5, endTimeInEpoch: 10 });
    assert.equal(policy.unreadable, undefined);
  });
});

const SENDER: Address = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";

describe("a paymaster with an unreadable rule", () => {
  let t: TestApp;
  let nonce = 0;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  const op = () => userOpV07(SENDER, ++nonce);
  const paymasterData = (dapp: Dapp) =>
    rpc(t, dapp, "pm_getPaymasterData", [op(), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}]);
  const stub = (dapp: Dapp) => rpc(t, dapp, "pm_getPaymasterStubData", [op(), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}]);
  const auth = (dapp: Dapp) => ({ token: dapp.token, apiKey: dapp.apiKey });

  /** A dApp with a funding wallet, a readable window and a spending limit whose stored cycle was corrupted. */
  async function dappWithBrokenLimit() {
    const dapp = await t.dapp();
    await linkFundingWallet(t, dapp);
    await addPolicy(t, dapp, "TIME_WINDOW", { startTimeInEpoch: 0 }, "always");
    const limit = { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, thresholdType: "COUNT", threshold: 9 };
    const limitId = await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", limit, "daily");
    const broken = { ...limit, cycleDuration: { value: 1, unit: "fortnight" } };
    await t.db.query("UPDATE policies SET policy_data = $2 WHERE id = $1", [limitId, JSON.stringify(broken)]);
    return { dapp, limitId, limit, broken };
  }

  const REASON =
    'Policy "daily" (PAYMASTER_SA_LIMIT) has unreadable settings: policyData.cycleDuration.unit must be one of ' +
    "minute, hour, day, week, month; nothing is sponsored until the dApp replaces its settings or turns it off";

  test("sponsorship and the stub refuse, naming the rule; the refusal is recorded at rule 1", async () => {
    const { dapp } = await dappWithBrokenLimit();
    const refused = await paymasterData(dapp);
    assert.deepEqual(
      [refused.status, refused.body.error],
      [400, { code: -32003, message: `Not sponsored: ${REASON}` }],
    );
    const [record] = await listSponsorships(t.db, dapp.paymasterId);
    assert.deepEqual(record?.rule_outcomes, [{ rule: "fundingAndRules", passed: false, reason: REASON }]);
    const atStub = await stub(dapp);
    assert.deepEqual([atStub.status, atStub.body.error], [400, { code: -32003, message: `Not sponsored: ${REASON}` }]);
  });

  test("the management API lists it as stored, leaves it out of the usage and refuses a partial limit update", async () => {
    const { dapp, limitId, broken } = await dappWithBrokenLimit();
    const list = await t.call("GET", "paymaster-policy", auth(dapp));
    assert.equal(list.status, 200, JSON.stringify(list.body));
    const shown = (list.body.data as { _id: string; policyData: unknown }[]).find((rule) => rule._id === limitId);
    assert.deepEqual(shown?.policyData, broken);
    const usage = await t.call("GET", "paymaster-policy/usage", auth(dapp));
    assert.deepEqual([usage.status, usage.body.data], [200, []]);
    const update = await t.call("PATCH", `paymaster-policy/limit/${limitId}`, {
      ...auth(dapp),
      body: { threshold: 3 },
    });
    assert.deepEqual(
      [update.status, update.body.message],
      [
        400,
        `Policy ${limitId} has unreadable settings (policyData.cycleDuration.unit must be one of minute, hour, day, ` +
          "week, month): replace them whole through the policy update",
      ],
    );
  });

  test("replacing its settings, or turning it off, lets sponsorship through again", async () => {
    const replaced = await dappWithBrokenLimit();
    assert.equal((await paymasterData(replaced.dapp)).status, 400);
    const patch = await t.call("PATCH", `paymaster-policy/${replaced.limitId}`, {
      ...auth(replaced.dapp),
      body: { policyData: replaced.limit },
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    const signed = await paymasterData(replaced.dapp);
    assert.equal(signed.status, 200, JSON.stringify(signed.body));

    const paused = await dappWithBrokenLimit();
    assert.equal((await paymasterData(paused.dapp)).status, 400);
    const off = await t.call("PATCH", `paymaster-policy/deactivate/${paused.limitId}`, auth(paused.dapp));
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal((await paymasterData(paused.dapp)).status, 200);
  });
});
