// The context keys real clients send to the ERC-7677 methods, each read or ignored as docs/sponsorship-rpc.md says and
// never a 500: viem's null context, permissionless's sponsorshipPolicyId, Alchemy's policyId (both accepted and
// ignored: the URL's paymaster and its rules decide), Candide's signingPhase (commit or finalize, and refused before
// EntryPoint v0.9, which alone signs in parallel), and token (selects ERC20 mode, checked). A key of the wrong type is
// -32602 naming it. And the answers' fields ERC-7677 requires: paymasterPostOpGasLimit on every v0.7 stub and data
// answer.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { userOpV06, userOpV07 } from "../helpers/userOps";

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";

let t: TestApp;
let dapp: Dapp;
let nonce = 0;
before(async () => {
  t = await startTestApp();
  dapp = await fundedDapp(t, { walletDeployment: true });
});
after(() => t.close());

const ask = (method: string, context: unknown, version: "0.6" | "0.7" = "0.6") =>
  version === "0.6"
    ? rpc(t, dapp, method, [userOpV06(SENDER, ++nonce), ENTRY_POINT_V06_ADDRESS, "0x7a69", context])
    : rpc(t, dapp, method, [userOpV07(SENDER, ++nonce), ENTRY_POINT_V07_ADDRESS, "0x7a69", context]);

test("null (viem without a context), {} and the policy ids: each sponsored, as with no context", async () => {
  const contexts: [string, unknown][] = [
    ["null", null],
    ["empty", {}],
    ["sponsorshipPolicyId (permissionless)", { sponsorshipPolicyId: "sp_cool_policy" }],
    ["policyId (Alchemy)", { policyId: "0f3d5b6e-1111-4222-8333-944455566677" }],
    ["both, null", { sponsorshipPolicyId: null, policyId: null }],
  ];
  for (const [name, context] of contexts) {
    for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
      for (const version of ["0.6", "0.7"] as const) {
        const reply = await ask(method, context, version);
        assert.equal(reply.status, 200, `${name}, ${method}, v${version}: ${JSON.stringify(reply.body)}`);
        const result = reply.body.result as Record<string, unknown>;
        if (version === "0.6") assert.match(String(result.paymasterAndData), /^0x[0-9a-f]{552}$/, name);
        else assert.match(String(result.paymasterPostOpGasLimit), /^0x[0-9a-f]+$/, `${name}: postOp limit present`);
      }
    }
  }
  const records = await listSponsorships(t.db, dapp.paymasterId);
  assert.ok(records.length >= 10 && records.every((record) => record.sponsored), "every data request was sponsored");
});

test("signingPhase: the schema takes commit or finalize; before EntryPoint v0.9 either is refused with the reason", async () => {
  for (const phase of ["commit", "finalize"]) {
    for (const version of ["0.6", "0.7"] as const) {
      const reply = await ask("pm_getPaymasterData", { signingPhase: phase }, version);
      assert.deepEqual(
        [reply.status, reply.body.error],
        [
          400,
          {
            code: -32602,
            message:
              `params[3].signingPhase: parallel signing needs EntryPoint v0.9, and this operation is for v${version}; ` +
              "leave signingPhase out to sign in sequence",
          },
        ],
      );
    }
  }
  for (const version of ["0.6", "0.7"] as const) {
    const reply = await ask("pm_getPaymasterStubData", { signingPhase: "later" }, version);
    assert.deepEqual(
      [reply.status, reply.body.error],
      [400, { code: -32602, message: "params[3].signingPhase must be commit or finalize" }],
    );
  }
  // permissionless's form of pm_sponsorUserOperation: parallel signing is never this method's.
  const sponsorForm = await rpc(t, dapp, "pm_sponsorUserOperation", [
    userOpV07(SENDER, ++nonce),
    ENTRY_POINT_V07_ADDRESS,
    { signingPhase: "commit" },
  ]);
  assert.deepEqual(sponsorForm.body.error, {
    code: -32602,
    message:
      "params[2].signingPhase: parallel signing is served by pm_getPaymasterData (ERC-7677) on EntryPoint v0.9, " +
      "not by this method",
  });
  const nothing = await listSponsorships(t.db, dapp.paymasterId);
  assert.equal(nothing.filter((record) => !record.sponsored).length, 0, "no refusal was recorded: params come first");
});

test("a context key of the wrong type: -32602 naming the key and the problem, in both versions and methods", async () => {
  const ignored = "must be a string of at most 200 characters (accepted and ignored: the paymaster's rules decide)";
  const cases: [unknown, RegExp | string][] = [
    [{ sponsorshipPolicyId: 5 }, `params[3].sponsorshipPolicyId ${ignored}`],
    [{ policyId: { id: "x" } }, `params[3].policyId ${ignored}`],
    [{ policyId: "p".repeat(201) }, `params[3].policyId ${ignored}`],
    ["context", "params[3] must be an object"],
  ];
  for (const [context, message] of cases) {
    for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
      for (const version of ["0.6", "0.7"] as const) {
        const reply = await ask(method, context, version);
        const label = `${JSON.stringify(context).slice(0, 60)}, ${method}, v${version}: ${JSON.stringify(reply.body)}`;
        assert.equal(reply.status, 400, label);
        assert.equal(reply.body.error.code, -32602, label);
        if (typeof message === "string") assert.equal(reply.body.error.message, message, label);
        else assert.match(reply.body.error.message, message, label);
      }
    }
  }
});

test("token selects ERC20 mode: a malformed one is -32602, and a chain without fee tokens refuses it by name", async () => {
  for (const method of ["pm_getPaymasterStubData", "pm_getPaymasterData"]) {
    const malformed = await ask(method, { token: "usdc" });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, -32602);
    assert.match(malformed.body.error.message, /^params\[3\]\.token must be a token address/);
    const unserved = await ask(method, { token: "0x000000000000000000000000000000000000dEaD" }, "0.7");
    assert.equal(unserved.status, 400);
    assert.match(unserved.body.error.message, /lists no fee tokens for it \(ERC20 mode\)$/);
  }
});
