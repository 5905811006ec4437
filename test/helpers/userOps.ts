import { type Address, type Hex, hexToBigInt, toHex } from "viem";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import type { UserOperationV07 } from "../../src/bindings/entryPoints/userOperationV07";
import { toRpcUserOperation } from "../../src/gasEstimation/gasEstimationBundler";

// User operations as a client sends them to the sponsorship endpoint (JSON numbers as strings), one builder per
// EntryPoint version. Each fills in plain values so a test names only what it is about:
//
//   userOpV06(SENDER, 3)                                  // the plain v0.6 operation, nonce 0x3
//   userOpV07(SENDER, ++nonce, { signature: "0x" })       // a v0.7/v0.8 operation as viem sends it
//
// The overrides go in last, so a test that needs another value for any field passes it there.

/** The v0.6 builder's gas figures as numbers, for tests that work out the operation's cost (0.00029 ETH at 1 gwei). */
export const PLAIN_GAS = {
  callGasLimit: 100_000n,
  verificationGasLimit: 50_000n,
  preVerificationGas: 40_000n,
  maxFeePerGas: 1_000_000_000n,
};

/** PLAIN_GAS as the v0.6 builder sends it (decimal strings), with its priority fee. */
export const PLAIN_GAS_FIELDS = {
  callGasLimit: PLAIN_GAS.callGasLimit.toString(),
  verificationGasLimit: PLAIN_GAS.verificationGasLimit.toString(),
  preVerificationGas: PLAIN_GAS.preVerificationGas.toString(),
  maxFeePerGas: PLAIN_GAS.maxFeePerGas.toString(),
  maxPriorityFeePerGas: "1000000",
};

/** Gas in each form the endpoint reads (hex, a JSON number, a decimal string), mixed in one operation. */
export const MIXED_FORM_GAS = {
  callGasLimit: "0x1a930",
  verificationGasLimit: 57121,
  preVerificationGas: "75388",
  maxFeePerGas: "0xc02244",
  maxPriorityFeePerGas: "0xf4240",
};

/** The gas a bundler estimates for a SimpleAccount's call, in hex as viem sends it after the estimate. */
export const ESTIMATED_GAS = {
  callGasLimit: "0x186a0",
  verificationGasLimit: "0x30d40",
  preVerificationGas: "0xc350",
  maxFeePerGas: "0x3b9aca00",
  maxPriorityFeePerGas: "0x3b9aca00",
};

const hexNonce = (nonce: number | bigint) => `0x${nonce.toString(16)}`;

/**
 * A v0.6 operation without initCode or callData, with gas figures the tests' rules accept: the plainest operation to
 * sponsor, for tests that are about the rules around it, not the operation.
 */
export function userOpV06<Sender extends string, Overrides extends object = object>(
  sender: Sender,
  nonce: number | bigint,
  overrides?: Overrides,
) {
  return {
    sender,
    nonce: hexNonce(nonce),
    initCode: "0x",
    callData: "0x",
    ...PLAIN_GAS_FIELDS,
    ...(overrides as Overrides),
  };
}

/** A v0.7 or v0.8 operation (the two share their fields) without a factory or callData, with ESTIMATED_GAS. */
export function userOpV07<Sender extends string, Overrides extends object = object>(
  sender: Sender,
  nonce: number | bigint,
  overrides?: Overrides,
) {
  return { sender, nonce: hexNonce(nonce), callData: "0x", ...ESTIMATED_GAS, ...(overrides as Overrides) };
}

/**
 * A v0.7/v0.8 operation as sent (hex strings) with the paymaster fields of an ERC-7677 answer put in: what goes on
 * chain, unsigned by the account, for tests that check the paymaster's signature over it.
 */
export function answeredUserOpV07(
  op: ReturnType<typeof userOpV07> & { factory?: string; factoryData?: string },
  answer: Record<string, unknown>,
): UserOperationV07 {
  return {
    sender: op.sender as Address,
    nonce: BigInt(op.nonce),
    ...(op.factory ? { factory: op.factory as Address, factoryData: (op.factoryData as Hex) ?? "0x" } : {}),
    callData: op.callData as Hex,
    callGasLimit: BigInt(op.callGasLimit),
    verificationGasLimit: BigInt(op.verificationGasLimit),
    preVerificationGas: BigInt(op.preVerificationGas),
    maxFeePerGas: BigInt(op.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(op.maxPriorityFeePerGas),
    paymaster: answer.paymaster as Address,
    paymasterVerificationGasLimit: BigInt(answer.paymasterVerificationGasLimit as string),
    paymasterPostOpGasLimit: BigInt(answer.paymasterPostOpGasLimit as string),
    paymasterData: answer.paymasterData as Hex,
    signature: "0x",
  };
}

/** A v0.6 operation as wallets send it: every number in hex, and no paymaster data or signature yet. */
export function sentUserOpV06(op: UserOperation) {
  return { ...toRpcUserOperation(op), paymasterAndData: "0x", signature: "0x" };
}

/** A v0.6 operation as an SDK sends it: numbers in hex, only `fields` (all by default), signature 0x unless given. */
export function sentFieldsV06(op: UserOperation, fields = Object.keys(op) as (keyof UserOperation)[]) {
  const out: Record<string, unknown> = { signature: "0x" };
  for (const field of fields) {
    const value = op[field];
    out[field] = typeof value === "bigint" ? toHex(value) : value;
  }
  return out;
}

/** `op` with the gas limits and fees of a sponsorship answer, which the answer's signature covers. */
export function withAnsweredGas<Op extends object>(op: Op, answer: Record<string, string | number>) {
  return {
    ...op,
    callGasLimit: BigInt(answer.callGasLimit as string | number),
    verificationGasLimit: BigInt(answer.verificationGasLimit as string | number),
    preVerificationGas: BigInt(answer.preVerificationGas as string | number),
    maxFeePerGas: BigInt(answer.maxFeePerGas as string | number),
    maxPriorityFeePerGas: BigInt(answer.maxPriorityFeePerGas as string | number),
  };
}

/**
 * A later version's operation (viem's shape, unsigned) with the fields of Pimlico's `pm_sponsorUserOperation` answer:
 * the account's three gas limits and our paymaster fields, all of which the paymaster's signature covers.
 */
export function withAnsweredFieldsV07<Op extends object>(op: Op, answer: Record<string, unknown>) {
  const quantity = (field: string) => hexToBigInt(answer[field] as Hex);
  return {
    ...op,
    callGasLimit: quantity("callGasLimit"),
    verificationGasLimit: quantity("verificationGasLimit"),
    preVerificationGas: quantity("preVerificationGas"),
    paymaster: answer.paymaster as Address,
    paymasterData: answer.paymasterData as Hex,
    paymasterVerificationGasLimit: quantity("paymasterVerificationGasLimit"),
    paymasterPostOpGasLimit: quantity("paymasterPostOpGasLimit"),
    signature: "0x" as Hex,
  };
}

/**
 * A later version's operation (viem's shape) with the paymaster fields of an ERC-7677 pm_getPaymasterData answer (hex
 * quantities), v0.9's paymasterSignature among them when the answer has one (a commit's placeholder, a finalize's).
 */
export function withPaymasterFields<Op extends object>(op: Op, answer: Record<string, unknown>) {
  return {
    ...op,
    paymaster: answer.paymaster as Address,
    paymasterData: answer.paymasterData as Hex,
    paymasterVerificationGasLimit: hexToBigInt(answer.paymasterVerificationGasLimit as Hex),
    paymasterPostOpGasLimit: hexToBigInt(answer.paymasterPostOpGasLimit as Hex),
    ...(answer.paymasterSignature === undefined ? {} : { paymasterSignature: answer.paymasterSignature as Hex }),
  };
}
