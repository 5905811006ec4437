// The MAX_GAS_PRICE rule through the management API and pm_sponsorUserOperation: created, listed, refused above the
// cap with both figures, sponsored at it, off while paused; and its settings refused with the field named.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { size } from "viem";
import { listSponsorships } from "../../src/storage/sponsorships";
import { startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const opAt = (nonce: number, maxFeePerGas: bigint) =>
  userOpV06(SENDER, nonce, { maxFeePerGas: maxFeePerGas.toString(), maxPriorityFeePerGas: "1000000000" });

test("above the cap: 0x with both figures, recorded as refused by maxGasPrice; at the cap: sponsored; paused: off", async () => {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  const policyId = await addPolicy(t, dapp, "MAX_GAS_PRICE", { maxFeePerGasGwei: 30 }, "spike guard");

  const listed = await t.call("GET", "paymaster-policy", { token: dapp.token, apiKey: dapp.apiKey });
  const rule = (listed.body.data as { _id: string; policyType: string; policyData: unknown; active: boolean }[]).find(
    (entry) => entry._id === policyId,
  );
  assert.deepEqual(
    [rule?.policyType, rule?.policyData, rule?.active],
    ["MAX_GAS_PRICE", { maxFeePerGasGwei: 30 }, true],
  );

  const spike = await rpc(t, dapp, "pm_sponsorUserOperation", [opAt(0, 45_000_000_000n), { mode: "SPONSORED" }]);
  assert.equal(spike.status, 200);
  const reason = 'Gas price cap "spike guard" exceeded: maxFeePerGas is 45 gwei, above the cap of 30 gwei';
  assert.deepEqual([spike.body.result.paymasterAndData, spike.body.result.reason], ["0x", reason]);
  const [record] = await listSponsorships(t.db, dapp.paymasterId);
  assert.deepEqual(record?.rule_outcomes.at(-1), { rule: "maxGasPrice", passed: false, reason });

  const calm = await rpc(t, dapp, "pm_sponsorUserOperation", [opAt(1, 30_000_000_000n), { mode: "SPONSORED" }]);
  assert.equal(size(calm.body.result.paymasterAndData), 276, JSON.stringify(calm.body));

  const paused = await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, {
    token: dapp.token,
    apiKey: dapp.apiKey,
  });
  assert.equal(paused.status, 200);
  // A paused cap is not evaluated; the paymaster keeps another rule so that rule 1 still finds one active.
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  const unpaused = await rpc(t, dapp, "pm_sponsorUserOperation", [opAt(2, 45_000_000_000n), { mode: "SPONSORED" }]);
  assert.equal(size(unpaused.body.result.paymasterAndData), 276, JSON.stringify(unpaused.body));
});

test("bad settings are refused with the field and the problem; nothing is written", async () => {
  const dapp = await t.dapp();
  const create = (policyData: unknown) =>
    t.call("POST", "paymaster-policy", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { name: "cap", policyType: "MAX_GAS_PRICE", policyData },
    });
  const cases: [unknown, string][] = [
    [{}, "policyData.maxFeePerGasGwei is required"],
    [{ maxFeePerGasGwei: 0 }, "policyData.maxFeePerGasGwei must be a positive number of gwei, at most 1000000000"],
    [{ maxFeePerGasGwei: "30" }, "policyData.maxFeePerGasGwei must be a positive number of gwei, at most 1000000000"],
    [
      { maxFeePerGasGwei: 30, maxPriorityFeePerGasGwei: -1 },
      "policyData.maxPriorityFeePerGasGwei must be a positive number of gwei, at most 1000000000",
    ],
  ];
  for (const [policyData, message] of cases) {
    const reply = await create(policyData);
    assert.deepEqual([reply.status, reply.body.message], [400, message], JSON.stringify(policyData));
  }
  const listed = await t.call("GET", "paymaster-policy", { token: dapp.token, apiKey: dapp.apiKey });
  assert.deepEqual(listed.body.data, []);
});
