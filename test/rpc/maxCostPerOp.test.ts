// The per-operation cost cap through pm_sponsorUserOperation: an operation above it is refused with both figures, the
// refusal is recorded with the rule's outcome, and pausing the cap lets the same operation through.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { size } from "viem";
import { worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS, userOpV06 } from "../helpers/userOps";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

// (100k + 3·50k + 40k) gas at 1 gwei = 0.00029 ETH
assert.equal(worstCaseCostWei(PLAIN_GAS), 290_000_000_000_000n);

const op = (nonce: number) => userOpV06("0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4", nonce);
const sponsor = async (dapp: Dapp, nonce: number) => {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [op(nonce), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: string; reason?: string };
};
const setActive = (dapp: Dapp, id: string, action: "activate" | "deactivate") =>
  t.call("PATCH", `paymaster-policy/${action}/${id}`, { token: dapp.token, apiKey: dapp.apiKey });

test("an operation above the cap is refused with both figures; paused, the cap stops refusing", async () => {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  const capId = await addPolicy(
    t,
    dapp,
    "MAX_COST_PER_OP",
    { threshold: 0.00028, thresholdType: "NATIVE_ASSET" },
    "one op",
  );
  const refused = await sponsor(dapp, 0);
  assert.equal(refused.paymasterAndData, "0x");
  const reason =
    'Cost cap "one op" exceeded: this operation may cost up to 0.00029 ETH, above the cap of 0.00028 ETH per operation';
  assert.equal(refused.reason, reason);
  const [record] = await listSponsorships(t.db, dapp.paymasterId);
  assert.equal(record?.sponsored, false);
  assert.deepEqual(record?.rule_outcomes.at(-1), { rule: "maxCostPerOp", passed: false, reason });

  // Paused, the cap is no rule at all: with nothing else to pay for, rule 1 refuses instead.
  assert.equal((await setActive(dapp, capId, "deactivate")).status, 200);
  assert.match((await sponsor(dapp, 1)).reason ?? "", /^No policies were set/);

  // A second cap at exactly the worst case sponsors the operation once the first stays paused.
  await addPolicy(t, dapp, "MAX_COST_PER_OP", { threshold: 0.00029, thresholdType: "NATIVE_ASSET" }, "exact");
  const sponsored = await sponsor(dapp, 2);
  assert.equal(sponsored.reason, undefined);
  assert.equal(size(sponsored.paymasterAndData as `0x${string}`), 276);

  // Resumed, the first cap refuses again.
  assert.equal((await setActive(dapp, capId, "activate")).status, 200);
  assert.equal((await sponsor(dapp, 3)).reason, reason);
});
