import assert from "node:assert/strict";
import { test } from "node:test";
import type { Hex } from "viem";
import { getUserOperationHash } from "viem/account-abstraction";
import { ENTRY_POINT_V09_ADDRESS, paymasterSignatureSuffix } from "../../src/bindings/entryPoints/entryPointV09";
import {
  getUserOpHashV07,
  packUserOperation,
  type UserOperationV07,
} from "../../src/bindings/entryPoints/userOperationV07";

const op: UserOperationV07 = {
  sender: "0x1111111111111111111111111111111111111111",
  nonce: 7n,
  callData: "0xb61d27f6",
  callGasLimit: 100_000n,
  verificationGasLimit: 200_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymaster: "0x2222222222222222222222222222222222222222",
  paymasterVerificationGasLimit: 60_000n,
  paymasterPostOpGasLimit: 40_000n,
  paymasterData: "0xabcdef",
  signature: "0x",
};
const signatureA: Hex = `0x${"11".repeat(65)}`;
const signatureB: Hex = `0x${"22".repeat(64)}1b`;

test("v0.9's user operation hash leaves the paymaster signature out and keeps the magic, as viem's does", () => {
  const a = getUserOpHashV07({ ...op, paymasterSignature: signatureA }, ENTRY_POINT_V09_ADDRESS, 31337, "0.9");
  const b = getUserOpHashV07({ ...op, paymasterSignature: signatureB }, ENTRY_POINT_V09_ADDRESS, 31337, "0.9");
  assert.equal(a, b);
  const viem = getUserOperationHash({
    chainId: 31337,
    entryPointAddress: ENTRY_POINT_V09_ADDRESS,
    entryPointVersion: "0.9",
    userOperation: { ...op, paymasterSignature: signatureA },
  });
  assert.equal(a, viem);
  // Without a paymaster signature the whole field is hashed, as in v0.8: a different hash.
  const sequential = getUserOpHashV07(op, ENTRY_POINT_V09_ADDRESS, 31337, "0.9");
  assert.notEqual(sequential, a);
  assert.equal(
    sequential,
    getUserOperationHash({
      chainId: 31337,
      entryPointAddress: ENTRY_POINT_V09_ADDRESS,
      entryPointVersion: "0.9",
      userOperation: op,
    }),
  );
});

test("the packed paymasterAndData carries the signature, its uint16 length and the magic after paymasterData", () => {
  const packed = packUserOperation({ ...op, paymasterSignature: signatureA });
  assert.ok(packed.paymasterAndData.endsWith(`${signatureA.slice(2)}004122e325a297439656`));
  assert.equal(paymasterSignatureSuffix(signatureB), `${signatureB}004122e325a297439656`);
});
