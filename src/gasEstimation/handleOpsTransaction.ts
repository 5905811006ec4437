// The transaction a bundler sends for one operation, serialized as bundlers serialize it to price its L1 data: an
// EIP-1559 handleOps([op], beneficiary) to the EntryPoint with the largest fees and a fixed signature, so that only
// the operation's own bytes decide its size. Alto prices exactly this: nonce 999999, both fees 2^64 − 1, r = s = 30
// bytes of 0x12345…, yParity 1, the EntryPoint as beneficiary, and no gas limit (it sets one under a name the
// serializer does not read, so the field is empty: 8 bytes fewer than the transaction sent, well inside the margin).
// test/chain/l1DataFeeEncoding.test.ts holds ours equal to Alto's own serializer.
import {
  type Address,
  concat,
  encodeFunctionData,
  type Hex,
  keccak256,
  maxUint64,
  serializeTransaction,
  size,
  slice,
} from "viem";
import { entryPointAbi } from "../bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../bindings/entryPoints/entryPointV07";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { packUserOperation, type UserOperationV07 } from "../bindings/entryPoints/userOperationV07";

const FIXED_R_S: Hex = "0x123451234512345123451234512345123451234512345123451234512345";
const FIXED_NONCE = 999_999;

/** handleOps([op], beneficiary) for the operation's EntryPoint version: v0.6's tuple, or the later versions' packing. */
export function handleOpsCalldata(op: UserOperation | UserOperationV07, beneficiary: Address): Hex {
  if ("paymasterAndData" in op) {
    return encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[op], beneficiary] });
  }
  return encodeFunctionData({
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [[packUserOperation(op)], beneficiary],
  });
}

/** The signed EIP-1559 transaction carrying `calldata` to the EntryPoint, as an L1 fee oracle is asked to price it. */
export function serializedHandleOps(chainId: number, entryPoint: Address, calldata: Hex): Hex {
  return serializeTransaction(
    {
      type: "eip1559",
      chainId,
      to: entryPoint,
      data: calldata,
      nonce: FIXED_NONCE,
      maxFeePerGas: maxUint64,
      maxPriorityFeePerGas: maxUint64,
    },
    { r: FIXED_R_S, s: FIXED_R_S, yParity: 1 },
  );
}

/**
 * `length` bytes that look random (keccak-256 chained from `seed`): a real signature does not compress, and L1 fees
 * are priced on compressed size, so a stand-in of repeated bytes would come out cheaper than the real operation.
 * Deterministic, so the same operation is priced the same way twice.
 */
export function incompressibleBytes(seed: Hex, length: number): Hex {
  const words: Hex[] = [];
  let next = keccak256(seed);
  for (let filled = 0; filled < length; filled += 32) {
    words.push(next);
    next = keccak256(next);
  }
  return slice(concat(words), 0, length);
}

/**
 * The operation's signatures as incompressible as real ones: the last 65 bytes of the account's signature (a longer
 * one keeps its prefix, e.g. a validator's address), and every occurrence of `standIn` (our dummy paymaster signature)
 * inside the paymaster's bytes.
 */
export function withRealisticSignatures<Op extends UserOperation | UserOperationV07>(op: Op, standIn: Hex): Op {
  const seed = keccak256(concat([op.sender, `0x${op.nonce.toString(16).padStart(64, "0")}`]));
  const signatureLength = size(op.signature);
  const tail = Math.min(signatureLength, 65);
  const signature =
    tail === 0
      ? op.signature
      : concat([slice(op.signature, 0, signatureLength - tail), incompressibleBytes(seed, tail)]);
  const standInFor = incompressibleBytes(keccak256(seed), size(standIn)).slice(2);
  const replaced = (bytes: Hex): Hex => bytes.replaceAll(standIn.slice(2), standInFor) as Hex;
  if ("paymasterAndData" in op) return { ...op, signature, paymasterAndData: replaced(op.paymasterAndData) };
  const later = op as UserOperationV07;
  return {
    ...op,
    signature,
    ...(later.paymasterData === undefined ? {} : { paymasterData: replaced(later.paymasterData) }),
  };
}
