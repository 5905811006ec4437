// Pausing a whole paymaster with PATCH /paymasterParameters {type: "active"}: while paused every RPC request is refused
// with "Paymaster … is paused" before any rule, so nothing is recorded or reserved; resumed, sponsorship goes on.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { size } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, fundedDapp, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const op = (nonce: number) => userOpV06("0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4", nonce);
const setPaused = (dapp: Dapp, body: Record<string, unknown>) =>
  t.call("PATCH", "paymasterParameters", { token: dapp.token, apiKey: dapp.apiKey, body });

test("paused: every method refused naming the paymaster, nothing recorded; resumed: sponsored again", async () => {
  const dapp = await fundedDapp(t, { dapp: { name: "shop" }, walletDeployment: true });
  const paused = await setPaused(dapp, { paymasterId: dapp.paymasterId, type: "active", active: false });
  assert.equal(paused.status, 200, JSON.stringify(paused.body));
  assert.equal(paused.body.message, "Paymaster updated successfully");
  assert.equal((paused.body.data as { paymasterId: string }).paymasterId, dapp.paymasterId);

  const message = `Paymaster "shop" (${dapp.paymasterId}) is paused`;
  const calls: [string, unknown[]][] = [
    ["pm_sponsorUserOperation", [op(0), { mode: "SPONSORED" }]],
    ["pm_getPaymasterStubData", [op(0), ENTRY_POINT_V06_ADDRESS, "0x7a69", {}]],
    ["pm_getPaymasterData", [op(0), ENTRY_POINT_V06_ADDRESS, "0x7a69", {}]],
  ];
  for (const [method, params] of calls) {
    const reply = await rpc(t, dapp, method, params);
    assert.deepEqual([reply.status, reply.body.error], [400, { code: -32003, message }], method);
  }
  assert.deepEqual(await listSponsorships(t.db, dapp.paymasterId), [], "nothing recorded, so nothing reserved");

  const resumed = await setPaused(dapp, { paymasterId: dapp.paymasterId, type: "active", active: true });
  assert.equal(resumed.status, 200);
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [op(1), { mode: "SPONSORED" }]);
  assert.equal(size(reply.body.result.paymasterAndData), 276, JSON.stringify(reply.body));
});

test("pausing one paymaster leaves the others sponsoring", async () => {
  const a = await fundedDapp(t, { walletDeployment: true });
  const b = await fundedDapp(t, { walletDeployment: true });
  assert.equal((await setPaused(a, { paymasterId: a.paymasterId, type: "active", active: false })).status, 200);
  assert.equal((await rpc(t, a, "pm_sponsorUserOperation", [op(0), { mode: "SPONSORED" }])).body.error.code, -32003);
  const other = await rpc(t, b, "pm_sponsorUserOperation", [op(0), { mode: "SPONSORED" }]);
  assert.equal(size(other.body.result.paymasterAndData), 276);
});

test("bad pause requests: 400 naming the field, 404 for another paymaster's id; nothing changes", async () => {
  const dapp = await t.dapp();
  const other = await t.dapp();
  const cases: [Record<string, unknown>, number, string][] = [
    [{ paymasterId: dapp.paymasterId, type: "active" }, 400, "active is required"],
    [{ paymasterId: dapp.paymasterId, type: "active", active: "false" }, 400, "active must be a boolean"],
    [{ paymasterId: other.paymasterId, type: "active", active: false }, 404, "Paymaster not found"],
    [{ paymasterId: "not-a-uuid", type: "active", active: false }, 404, "Paymaster not found"],
  ];
  for (const [body, status, message] of cases) {
    const reply = await setPaused(dapp, body);
    assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }], JSON.stringify(body));
  }
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [op(0), { mode: "SPONSORED" }]);
  assert.equal(size(reply.body.result.paymasterAndData), 276, "still active after the refused requests");
});

test("the paymaster list and the update's answer show the paused state as active", async () => {
  const dapp = await t.dapp();
  const activeOf = async () => {
    const reply = await t.call("GET", "paymaster", { token: dapp.token });
    assert.equal(reply.status, 200);
    const listed = (reply.body.data as { paymasterId: string; active: boolean }[]).find(
      (p) => p.paymasterId === dapp.paymasterId,
    );
    return listed?.active;
  };
  assert.equal(await activeOf(), true);
  const paused = await setPaused(dapp, { paymasterId: dapp.paymasterId, type: "active", active: false });
  assert.equal((paused.body.data as { active: boolean }).active, false);
  assert.equal(await activeOf(), false);
  await setPaused(dapp, { paymasterId: dapp.paymasterId, type: "active", active: true });
  assert.equal(await activeOf(), true);
});
