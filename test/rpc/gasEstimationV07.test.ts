// pm_sponsorUserOperation for EntryPoint v0.7, v0.8 and v0.9 on a chain with a node and no bundler: the gas limits a
// wallet leaves out (or sends as 0x0) are estimated by simulation through the node, signed, and the operation, signed
// by the account over those figures, is mined by handleOps. The ledger records the L1 part (none on this chain); a
// call that reverts is -32602 with the reason; a signed operation never carries a zero gas limit.
import assert from "node:assert/strict";
import { test } from "node:test";
import { type Address, type Hex, hexToBigInt, isAddressEqual, parseEventLogs } from "viem";
import { formatUserOperationRequest, toPackedUserOperation, type UserOperation } from "viem/account-abstraction";
import { privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { anvilKeys } from "../contracts/fixtures";
import { confirm } from "../contracts/v07/localStacks";
import type { Dapp } from "../helpers/app";
import { chainDapp, TARGET } from "../helpers/chainApp";
import { rpc } from "../helpers/dappSetup";
import { freshOperationV07 } from "../helpers/freshOperationV07";
import { stacksAppFile } from "../helpers/stacksAppFile";
import { withPaymasterFields } from "../helpers/userOps";

type Version = "0.7" | "0.8" | "0.9";

let dapp: Dapp;
const { env, t } = stacksAppFile({ deposits: ["0.7", "0.8", "0.9"] }, async ({ t }) => {
  dapp = await chainDapp(t);
});

/** A fresh SimpleAccount's first operation at `version`'s EntryPoint, with its fees and no gas limits. */
async function freshOperation(
  version: Version,
  calls: { to: Address; value: bigint; data?: Hex }[] = [{ to: TARGET, value: 0n }],
) {
  const stack = env().chain.info.entryPoints[version];
  const { account, op } = await freshOperationV07(env().publicClient, version, stack, { calls });
  return { account, op: { ...op, signature: "0x" as Hex }, entryPoint: stack.entryPoint };
}

async function sponsor(op: Record<string, unknown>, entryPoint: Address) {
  const { signature: _, ...sent } = op;
  return rpc(t(), dapp, "pm_sponsorUserOperation", [
    formatUserOperationRequest(sent as UserOperation),
    entryPoint,
    { calculateGasLimits: true },
  ]);
}

for (const version of ["0.7", "0.8", "0.9"] as const) {
  test(`v${version}: the gas left out is estimated through the node, signed, and the operation is mined`, async () => {
    const { account, op, entryPoint } = await freshOperation(version);
    const reply = await sponsor(op, entryPoint);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const result = reply.body.result as Record<string, Hex>;
    const gas = {
      callGasLimit: hexToBigInt(result.callGasLimit as Hex),
      verificationGasLimit: hexToBigInt(result.verificationGasLimit as Hex),
      preVerificationGas: hexToBigInt(result.preVerificationGas as Hex),
    };
    assert.ok(gas.callGasLimit > 10_000n && gas.callGasLimit < 100_000n, `callGasLimit ${gas.callGasLimit}`);
    assert.ok(gas.verificationGasLimit > 150_000n, `verificationGasLimit ${gas.verificationGasLimit}`);
    assert.ok(gas.preVerificationGas > 40_000n, `preVerificationGas ${gas.preVerificationGas}`);
    const full: UserOperation<"0.8"> = withPaymasterFields({ ...op, ...gas }, result);
    const signature = await account.signUserOperation(full);
    const receipt = await confirm(
      env(),
      env()
        .wallet(anvilKeys.bundler)
        .writeContract({
          address: entryPoint,
          abi: entryPointV07Abi,
          functionName: "handleOps",
          args: [[toPackedUserOperation({ ...full, signature })], privateKeyToAccount(anvilKeys.bundler).address],
        }),
    );
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.ok(event && isAddressEqual(event.args.sender, op.sender), "the operation ran");
    assert.equal(event.args.success, true, "its call succeeded");
    assert.ok(isAddressEqual(event.args.paymaster, env().chain.info.entryPoints[version].verifyingPaymaster));

    // The ledger keeps the L1 part of what was estimated: none on a chain without an L1 data fee.
    const ledger = await t().call("GET", "sponsorships", { token: dapp.token, apiKey: dapp.apiKey });
    const row = (ledger.body.data as { sender: string; l1DataGas: string | null }[]).find(
      (entry) => entry.sender === op.sender.toLowerCase(),
    );
    assert.equal(row?.l1DataGas, "0", JSON.stringify(row));
  });
}

test("gas limits sent as 0x0 are estimated, never signed as zero", async () => {
  const { op, entryPoint } = await freshOperation("0.8");
  const reply = await sponsor(
    { ...op, callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n },
    entryPoint,
  );
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result as Record<string, Hex>;
  for (const field of ["callGasLimit", "verificationGasLimit", "preVerificationGas"]) {
    assert.ok(hexToBigInt(result[field] as Hex) > 10_000n, `${field} ${result[field]}`);
  }
});

test("a call that reverts is -32602 with the reason, and nothing is signed", async () => {
  const stack = env().chain.info.entryPoints["0.8"];
  // The EntryPoint has no function of that selector and no fallback: the account's call reverts.
  const { op, entryPoint } = await freshOperation("0.8", [{ to: stack.entryPoint, value: 0n, data: "0xdeadbeef" }]);
  const reply = await sponsor(op, entryPoint);
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.error.code, -32602);
  assert.match(reply.body.error.message, /^Gas estimation failed: the operation's call reverts/);
});
