// The gas a v0.6 operation is signed over as the client sent it (operations/unpackedOperation.ts estimates it when
// asked), and the refusal of zero limits every version shares.
import type { SignableUserOperation } from "../bindings/entryPoints/v06";
import { invalidParams } from "../errors";
import {
  FEE_FIELDS,
  GAS_LIMIT_FIELDS,
  type PartialUserOperation,
  zeroGasLimits,
} from "../sponsorship/partialUserOperation";

/** `calculateGasLimits` false: the signature covers the gas values the client sent, so all must be there. */
export function asGiven(userOp: PartialUserOperation): SignableUserOperation {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(
      `params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits, so send them or set ` +
        "calculateGasLimits to true",
    );
  }
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  refuseZeroGas(userOp);
  return userOp as SignableUserOperation;
}

/** A signed operation never carries a zero gas limit it needs (zeroGasLimits): -32602 names the fields. */
export function refuseZeroGas(userOp: Parameters<typeof zeroGasLimits>[0]): void {
  const zero = zeroGasLimits(userOp);
  if (zero.length > 0) {
    throw invalidParams(
      `params[0].${zero.join(", ")} ${zero.length === 1 ? "is" : "are"} 0: an operation signed with no gas there ` +
        "can never be mined; send the gas or have it estimated (calculateGasLimits: true)",
    );
  }
}
