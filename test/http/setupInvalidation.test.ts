import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setPolicyActive } from "../../src/storage/policies";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

/**
 * A management write drops the cached sponsorship setup of its own paymaster, and only after it succeeded. The cache
 * is kept for an hour here, and rules are also paused behind the service's back (straight in storage), so the next
 * sponsorship shows which setup was used: the cached one (rule still active, sponsored) or a fresh one (refused).
 */
let t: TestApp;
before(async () => {
  t = await startTestApp({ setupCacheTtlMs: 3_600_000 });
});
after(() => t.close());

let nonce = 0;
const userOp = () => userOpV06("0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4", nonce++);

/** Whether the dApp's next operation is sponsored (a signed paymasterAndData) rather than refused. */
async function sponsored(dapp: Dapp): Promise<boolean> {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(), { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result as { paymasterAndData?: string } | undefined;
  return typeof result?.paymasterAndData === "string" && result.paymasterAndData !== "0x";
}

/** A dApp whose only rule (wallet deployment) lets every operation through while it is active. */
async function dappWithOneRule() {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  const policyId = await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  return { dapp, policyId };
}

test("refused writes keep the cache; a write to one paymaster drops its entry only", async () => {
  const a = await dappWithOneRule();
  const b = await dappWithOneRule();
  // Linking a funding wallet notifies a change of the account's credentials, which drops the account's cached setups
  // when it is heard: on PostgreSQL a moment after the commit. Heard now, before the setups this test keeps are cached.
  await t.notificationsHeard();
  assert.equal(await sponsored(a.dapp), true, "A is sponsored (its setup is now cached)");
  assert.equal(await sponsored(b.dapp), true, "B is sponsored (its setup is now cached)");

  // Behind the service's back: neither cached setup knows.
  await setPolicyActive(t.db, a.dapp.paymasterId, a.policyId, false);
  await setPolicyActive(t.db, b.dapp.paymasterId, b.policyId, false);

  const wrongToken = await t.call("PATCH", `paymaster-policy/deactivate/${a.policyId}`, {
    token: "not-a-token",
    apiKey: a.dapp.apiKey,
  });
  assert.equal(wrongToken.status, 401);
  const badBody = await t.call("POST", "smart-contract", {
    token: a.dapp.token,
    apiKey: a.dapp.apiKey,
    body: { name: "c", address: "0x12", abi: "[]" },
  });
  assert.equal(badBody.status, 400);
  const unknownPolicy = await t.call("PATCH", "paymaster-policy/activate/00000000-0000-4000-8000-000000000000", {
    token: a.dapp.token,
    apiKey: a.dapp.apiKey,
  });
  assert.equal(unknownPolicy.status, 404);
  assert.equal(await sponsored(a.dapp), true, "a 401, a 400 and a 404 left A's cached setup in place");

  // A successful write to A: A's next sponsorship reads the stored setup (its rule paused), B's still the cached one.
  const paused = await t.call("PATCH", `paymaster-policy/deactivate/${a.policyId}`, {
    token: a.dapp.token,
    apiKey: a.dapp.apiKey,
  });
  assert.equal(paused.status, 200);
  assert.equal(await sponsored(a.dapp), false, "the write applies to A's very next sponsorship");
  assert.equal(await sponsored(b.dapp), true, "B's entry stayed cached");

  // And back: resuming through the API applies at once too.
  const resumed = await t.call("PATCH", `paymaster-policy/activate/${a.policyId}`, {
    token: a.dapp.token,
    apiKey: a.dapp.apiKey,
  });
  assert.equal(resumed.status, 200);
  assert.equal(await sponsored(a.dapp), true);
});
