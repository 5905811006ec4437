// preVerificationGas of an EntryPoint v0.7, v0.8 or v0.9 operation: the same two bundler rules as v0.6's
// (preVerificationGas.ts), over the operation as those EntryPoints take it, packed. Alto prices the packed operation
// by the real length of its paymaster data and signature (not v0.6's length of their hex text), adds the cost of an
// EIP-7702 authorization an operation carries, and credits its EIP-7623 floor with a tenth of callGasLimit and the
// paymaster's postOp limit. test/chain/preVerificationGasV07.test.ts holds ours to Alto's own function.
import { encodeAbiParameters, type Hex, hexToBytes, maxUint128, parseAbiParameters, size } from "viem";
import { packUserOperation, type UserOperationV07 } from "../bindings/entryPoints/userOperationV07";
import { DUMMY_SIGNATURE } from "./gasEstimationStub";
import {
  LARGEST_GAS_VALUES,
  nonZero,
  PRE_VERIFICATION_GAS_PLACEHOLDER,
  pimlicoRule,
  referenceRule,
  withPreVerificationMargin,
} from "./preVerificationGas";

/** What an EIP-7702 authorization in the bundle transaction costs (EIP-7702's PER_EMPTY_ACCOUNT_COST). */
const EIP7702_AUTHORIZATION_GAS = 25_000n;

const packedTuple = parseAbiParameters(
  "(address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature)",
);

function packedBytes(op: UserOperationV07): Uint8Array {
  return hexToBytes(encodeAbiParameters(packedTuple, [packUserOperation(op)]));
}

/** What Alto's v2 API requires of the operation (its calcExecutionPvgComponent for the later EntryPoints). */
export function pimlicoPreVerificationGasV07(op: UserOperationV07, eip7623 = true): bigint {
  const hasPaymaster = op.paymaster !== undefined;
  const bytes = packedBytes({
    ...op,
    ...LARGEST_GAS_VALUES,
    ...(hasPaymaster
      ? {
          paymasterVerificationGasLimit: maxUint128,
          paymasterPostOpGasLimit: maxUint128,
          paymasterData: nonZero(size(op.paymasterData ?? "0x")),
        }
      : {}),
    signature: nonZero(size(op.signature)),
  });
  return pimlicoRule(bytes, {
    callData: op.callData,
    extraPerOperation: op.eip7702Auth ? EIP7702_AUTHORIZATION_GAS : 0n,
    creditedGas: op.callGasLimit + (op.paymasterPostOpGasLimit ?? 0n),
    eip7623,
  });
}

/**
 * preVerificationGas of an operation whose signatures are not made yet (the account's and ours of their final length,
 * ours the dummy one): the larger of the two rules, the reference one with both signatures' bytes priced as non-zero,
 * plus the margin. Its gas limits must be final (the EIP-7623 floor depends on them).
 */
export function preVerificationGasForV07(op: UserOperationV07): bigint {
  const worstCase: UserOperationV07 = {
    ...op,
    preVerificationGas: PRE_VERIFICATION_GAS_PLACEHOLDER,
    signature: nonZero(Math.max(size(op.signature), 65)),
    ...(op.paymasterData === undefined
      ? {}
      : { paymasterData: op.paymasterData.replaceAll(DUMMY_SIGNATURE.slice(2), "ff".repeat(65)) as Hex }),
  };
  const reference = referenceRule(packedBytes(worstCase)) + (op.eip7702Auth ? EIP7702_AUTHORIZATION_GAS : 0n);
  return withPreVerificationMargin(reference, pimlicoPreVerificationGasV07(op));
}
