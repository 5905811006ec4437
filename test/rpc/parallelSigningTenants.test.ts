// EntryPoint v0.9 parallel signing across tenants: a commitment belongs to the paymaster that made it. The sender and
// nonce of an operation are public, so a paymaster of another account may commit the same operation; both commitments
// must then live side by side, and each paymaster's finalize must find its own (before migration 27, the second commit
// overwrote the first, whose finalize then got -32003 "no live commitment").
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Hex } from "viem";
import { ENTRY_POINT_V09_ADDRESS } from "../../src/bindings/entryPoints/entryPointV09";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { userOpV07 } from "../helpers/userOps";

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
const ACCOUNT_SIGNATURE = `0x${"ab".repeat(65)}`;

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const step = (dapp: Dapp, userOp: unknown, signingPhase: "commit" | "finalize") =>
  rpc(t, dapp, "pm_getPaymasterData", [userOp, ENTRY_POINT_V09_ADDRESS, "0x7a69", { signingPhase }]);

test("two accounts' paymasters commit the same sender and nonce: each finalizes with its own signature", async () => {
  const first = await fundedDapp(t, { walletDeployment: true });
  const second = await fundedDapp(t, { walletDeployment: true });
  assert.notEqual(first.accountId, second.accountId);
  const operation = userOpV07(SENDER, 42, { signature: "0x" });
  const commits = [];
  for (const dapp of [first, second]) {
    const reply = await step(dapp, operation, "commit");
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    commits.push(reply.body.result as Record<string, Hex>);
  }
  const signatures = [];
  for (const [index, dapp] of [first, second].entries()) {
    const reply = await step(dapp, { ...operation, ...commits[index], signature: ACCOUNT_SIGNATURE }, "finalize");
    assert.equal(reply.status, 200, `paymaster ${index + 1}: ${JSON.stringify(reply.body)}`);
    const result = reply.body.result as Record<string, Hex>;
    assert.equal(result.paymasterData, commits[index]?.paymasterData);
    assert.notEqual(
      result.paymasterSignature,
      commits[index]?.paymasterSignature,
      "the real signature, not the placeholder",
    );
    signatures.push(result.paymasterSignature);
  }
  assert.notEqual(signatures[0], signatures[1], "each paymaster's own signature");
});
