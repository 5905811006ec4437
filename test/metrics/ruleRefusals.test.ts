// Each rule's refusals counted by GET /metrics under the decisions counter's reason label: the per-operation cost cap,
// the time window, the sender lists, and a paused paymaster's refusal, which no method reaches (mode "unknown").
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS_FIELDS, userOpV06, userOpV07 } from "../helpers/userOps";

const NOW = Date.UTC(2027, 0, 1);
let t: TestApp;
before(async () => {
  t = await startTestApp({ now: () => NOW });
});
after(() => t.close());

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
let nonce = 0;
const v06 = () => userOpV06(SENDER, ++nonce);
const v07 = () => userOpV07(SENDER, ++nonce, PLAIN_GAS_FIELDS);

async function refusedBy(policyType: string, policyData: unknown): Promise<Dapp> {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, policyType, policyData);
  const sponsored = await rpc(t, dapp, "pm_sponsorUserOperation", [v06(), { mode: "SPONSORED" }]);
  assert.equal(sponsored.body.result.paymasterAndData, "0x", JSON.stringify(sponsored.body));
  const erc7677 = await rpc(t, dapp, "pm_getPaymasterData", [v07(), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}]);
  assert.equal(erc7677.body.error?.code, -32003, JSON.stringify(erc7677.body));
  return dapp;
}

const count = (text: string, mode: string, reason: string) => {
  const line = new RegExp(
    `^paymaster_sponsorship_decisions_total\\{chain_id="31337",mode="${mode}",outcome="refused",reason="${reason}"\\} (\\d+)$`,
    "m",
  );
  return Number(text.match(line)?.[1] ?? 0);
};

test("refusals of the cost cap, the time window, both sender lists and a paused paymaster are each counted", async () => {
  await refusedBy("MAX_COST_PER_OP", { threshold: 0.0000001, thresholdType: "NATIVE_ASSET" });
  await refusedBy("TIME_WINDOW", { endTimeInEpoch: NOW });
  await refusedBy("SENDER_BLOCKLIST", { addresses: [SENDER] });
  await refusedBy("SENDER_ALLOWLIST", { addresses: [] });

  const paused = await t.dapp();
  await linkFundingWallet(t, paused);
  await addPolicy(t, paused, "WALLET_DEPLOYMENT", {});
  const off = await t.call("PATCH", "paymasterParameters", {
    token: paused.token,
    apiKey: paused.apiKey,
    body: { paymasterId: paused.paymasterId, type: "active", active: false },
  });
  assert.equal(off.status, 200);
  for (const [method, params] of [
    ["pm_sponsorUserOperation", [v06(), { mode: "SPONSORED" }]],
    ["pm_getPaymasterStubData", [v06(), ENTRY_POINT_V06_ADDRESS, "0x7a69", {}]],
    ["pm_getPaymasterData", [v07(), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}]],
  ] as const) {
    assert.equal((await rpc(t, paused, method, params)).body.error?.code, -32003, method);
  }
  // An unknown method on a paused paymaster is not a decision: it is answered as unknown and not counted.
  assert.equal((await rpc(t, paused, "pm_nothing", [])).body.error?.code, -32601);

  const scrape = await t.app.inject({ method: "GET", url: "/metrics" });
  assert.equal(scrape.statusCode, 200);
  const text = scrape.body;
  assert.equal(count(text, "sponsored", "maxCostPerOp"), 2);
  assert.equal(count(text, "sponsored", "timeWindow"), 2);
  assert.equal(count(text, "sponsored", "senderLists"), 4);
  assert.equal(count(text, "unknown", "paused"), 3);
  assert.ok(!text.includes(SENDER.toLowerCase().slice(2)), "no sender in any label");
});
