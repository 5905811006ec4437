// preVerificationGas pays the bundler for what the EntryPoint cannot meter: the transaction's base cost and calldata,
// and the per-operation work of handleOps. Bundlers do not agree on how to price that, and each refuses an operation
// that carries less than its own rule asks. The service signs at least what the two rules in use ask, plus a margin:
//
//   reference  eth-infinitism's bundler (EntryPoint v0.6), and the bundlers that copied its constants;
//   Pimlico    Alto's API v2, which Pimlico's hosted bundlers serve: it refuses at eth_sendUserOperation an operation
//              below its rule ("preVerificationGas is not enough, required: …"). Alto's API v1 checks nothing there.
//
// Our figure is checked against Alto's own function in test/chain/preVerificationGas.test.ts.
import { encodeAbiParameters, type Hex, hexToBytes, maxUint128, maxUint256, parseAbiParameters, size } from "viem";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { withWorstCaseSignatures } from "./gasEstimationStub";

/**
 * The reference bundler's constants: a whole transaction's 21,000 per operation (as if it travelled alone), 18,300 per
 * operation, 4 per word of the packed operation, and calldata at 4 per zero byte and 16 per non-zero byte.
 */
const PRE_VERIFICATION_OVERHEAD = {
  fixed: 21_000n,
  perUserOp: 18_300n,
  perUserOpWord: 4n,
  zeroByte: 4n,
  nonZeroByte: 16n,
} as const;

/**
 * Alto's constants (v2's check, EntryPoint v0.6, a chain without an L1 fee): calldata counted in EIP-7623 tokens (1
 * per zero byte, 4 per non-zero byte) at 4 gas each, 21,000 for the transaction, 9,830 for the bundle's own work and
 * 7,260 per operation, and 9.2 gas per word of the operation's callData. A callData that calls the account's
 * executeUserOp pays 1,610 and 8.2 per word of the whole operation instead. Where Alto is told the chain has EIP-7623
 * (`--supports-eip7623`), the operation pays at least the floor: 10 gas per token, less a tenth of its two limits.
 */
const PIMLICO_OVERHEAD = {
  gasPerToken: 4n,
  tokensPerNonZeroByte: 4n,
  transaction: 21_000n,
  bundle: 9_830n,
  perUserOp: 7_260n,
  perCallDataWordMilli: 9_200n,
  executeUserOp: 1_610n,
  executeUserOpPerWordMilli: 8_200n,
  floorGasPerToken: 10n,
} as const;

/** IAccountExecute.executeUserOp's selector: Alto prices such a callData by the operation's words instead. */
const EXECUTE_USER_OP_SELECTOR = "0x8dd7712f";

/**
 * Over the larger of the two rules, as Alto itself adds to its eth_estimateUserOperationGas answer: the operation is
 * then signed with what that bundler would have estimated, and stays accepted if a final signature is a few bytes
 * longer than the stand-in or a bundler's constants move a little. The reference rule alone also falls short of a
 * bundle of one: on anvil, handleOps with one first operation (initCode and a call) spent 50,510 gas outside the
 * EntryPoint's metering where that rule gave 48,324 (the prefund's refund, the UserOperationEvent and the
 * beneficiary's payment come after the metering ends). Unlike the two limits this is paid in full, so it stays small.
 */
export const PRE_VERIFICATION_MARGIN_PERCENT = 10n;

/** Stands for preVerificationGas inside the operation the reference rule prices: five non-zero bytes, above any value. */
export const PRE_VERIFICATION_GAS_PLACEHOLDER = 0xff_ffff_ffffn;

const userOperationTuple = parseAbiParameters(
  "(address sender, uint256 nonce, bytes initCode, bytes callData, uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas, bytes paymasterAndData, bytes signature)",
);

/** The operation as handleOps' calldata carries it (a tuple in the ops array). */
function packed(op: UserOperation): Uint8Array {
  return hexToBytes(encodeAbiParameters(userOperationTuple, [op]));
}

function words(bytes: number): bigint {
  return BigInt(Math.ceil(bytes / 32));
}

/** The reference bundler's rule over the operation exactly as given. */
export function preVerificationGasFormula(op: UserOperation): bigint {
  return referenceRule(packed(op));
}

/** The reference rule over an operation's bytes as handleOps carries them (any EntryPoint version's encoding). */
export function referenceRule(bytes: Uint8Array): bigint {
  let calldata = 0n;
  for (const byte of bytes) {
    calldata += byte === 0 ? PRE_VERIFICATION_OVERHEAD.zeroByte : PRE_VERIFICATION_OVERHEAD.nonZeroByte;
  }
  return (
    calldata +
    PRE_VERIFICATION_OVERHEAD.fixed +
    PRE_VERIFICATION_OVERHEAD.perUserOp +
    PRE_VERIFICATION_OVERHEAD.perUserOpWord * words(bytes.length)
  );
}

function larger(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Every gas field at its largest, as Alto prices an operation whose figures it does not know yet. */
export const LARGEST_GAS_VALUES = {
  callGasLimit: maxUint128,
  verificationGasLimit: maxUint128,
  preVerificationGas: maxUint256,
  maxFeePerGas: maxUint128,
  maxPriorityFeePerGas: maxUint128,
} as const;

/** `n` non-zero bytes. */
export function nonZero(n: number): Hex {
  return `0x${"ff".repeat(n)}`;
}

/**
 * What Alto's v2 API requires of the operation. It prices every gas field at its largest value, and paymasterAndData
 * and the signature as non-zero bytes, so only their lengths count, and for EntryPoint v0.6 it takes the length of
 * their hex text ("0x" included) as the number of bytes: 276 bytes of paymasterAndData are priced as 554.
 * `eip7623` also applies the floor Alto applies where it is told the chain prices calldata by EIP-7623.
 */
export function pimlicoPreVerificationGas(op: UserOperation, eip7623 = true): bigint {
  const bytes = packed({
    ...op,
    ...LARGEST_GAS_VALUES,
    paymasterAndData: nonZero(2 + 2 * size(op.paymasterAndData)),
    signature: nonZero(2 + 2 * size(op.signature)),
  });
  return pimlicoRule(bytes, {
    callData: op.callData,
    extraPerOperation: 0n,
    creditedGas: op.callGasLimit + op.verificationGasLimit,
    eip7623,
  });
}

/** What Alto's rule needs besides the operation's filled bytes. */
export interface PimlicoRuleInputs {
  callData: Hex;
  /** Added per operation: an EIP-7702 authorization's cost where the operation carries one. */
  extraPerOperation: bigint;
  /** The gas limits Alto counts as surely spent, a tenth of which the EIP-7623 floor credits. */
  creditedGas: bigint;
  eip7623: boolean;
}

/** Alto's rule over an operation's bytes filled as it fills them (every gas field at its largest, signatures 0xff). */
export function pimlicoRule(bytes: Uint8Array, inputs: PimlicoRuleInputs): bigint {
  const o = PIMLICO_OVERHEAD;
  let tokens = 0n;
  for (const byte of bytes) tokens += byte === 0 ? 1n : o.tokensPerNonZeroByte;
  const perOperation =
    inputs.extraPerOperation +
    (inputs.callData.slice(0, 10).toLowerCase() === EXECUTE_USER_OP_SELECTOR
      ? o.perUserOp + o.executeUserOp + (o.executeUserOpPerWordMilli * words(bytes.length)) / 1000n
      : o.perUserOp + (o.perCallDataWordMilli * words(size(inputs.callData))) / 1000n);
  const standard = o.transaction + o.gasPerToken * tokens + o.bundle + perOperation;
  if (!inputs.eip7623) return standard;
  // The floor replaces the standard price when higher; Alto credits the tenth of the limits it counts as surely spent.
  const floor = o.transaction + o.floorGasPerToken * tokens - inputs.creditedGas / 10n;
  return larger(floor, standard);
}

/** The larger of the two rules plus PRE_VERIFICATION_MARGIN_PERCENT. */
export function withPreVerificationMargin(reference: bigint, pimlico: bigint): bigint {
  const required = larger(reference, pimlico);
  return required + (required * PRE_VERIFICATION_MARGIN_PERCENT + 99n) / 100n;
}

/**
 * preVerificationGas of an operation whose signatures are not made yet (they must be of their final length): the
 * larger of the two rules, the reference one with every byte of both signatures priced as non-zero, plus
 * PRE_VERIFICATION_MARGIN_PERCENT. Its gas limits must be final (the EIP-7623 floor depends on them).
 */
export function preVerificationGasFor(op: UserOperation): bigint {
  const reference = preVerificationGasFormula(
    withWorstCaseSignatures({ ...op, preVerificationGas: PRE_VERIFICATION_GAS_PLACEHOLDER }),
  );
  return withPreVerificationMargin(reference, pimlicoPreVerificationGas(op));
}
