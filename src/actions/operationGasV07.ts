// The gas a v0.7/v0.8 operation is signed or quoted over: as the client sent it, or the account's gas from the
// chain's bundler; the paymaster's own limits are the paymaster kind's to set.
import type { Hex } from "viem";
import { invalidParams } from "../errors";
import { estimateWithBundlerV07 } from "../gasEstimation/gasEstimationBundlerV07";
import { DUMMY_SIGNATURE } from "../gasEstimation/gasEstimationStub";
import type { SignableUserOperationV07 } from "../sponsorship/entryPoints/v07";
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../sponsorship/paymasters/paymasterAndDataV07";
import { paymasterGasLimitsV07 } from "../sponsorship/paymasters/verifyingPaymasterGasV07";
import type { ActionContext } from "./context";
import type { EntryPointV07, PaymasterFieldsV07 } from "./stepRequest";

/**
 * The operation with the account's gas from the chain's bundler (with `stub`, our paymaster fields of the final length,
 * in it, so the estimate pays for them; what the client sent is a lower bound). Without a bundler configured the gas
 * must have been sent, and the operation is returned as it came.
 */
export async function estimatedV07(
  ctx: ActionContext,
  request: { target: EntryPointV07; userOp: PartialUserOperationV07; signature?: Hex },
  stub: PaymasterFieldsV07,
): Promise<PartialUserOperationV07> {
  const { chain } = ctx;
  if (!chain.bundlerUrl) {
    const missing = GAS_LIMIT_FIELDS.filter((field) => request.userOp[field] === undefined);
    if (missing.length > 0) {
      throw invalidParams(
        `params[0] is missing ${missing.join(", ")}: chain ${chain.chainId} (${chain.name}) has no bundler ` +
          "configured (bundlerUrl) to estimate the gas of EntryPoint v0.7 and v0.8 operations, so send the gas limits",
      );
    }
    return request.userOp;
  }
  const userOp = requireFees(request.userOp);
  const started = performance.now();
  const estimate = await estimateWithBundlerV07(chain.bundlerUrl, request.target.entryPoint, {
    ...userOp,
    callGasLimit: userOp.callGasLimit ?? 0n,
    verificationGasLimit: userOp.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.preVerificationGas ?? 0n,
    ...stub,
    signature: request.signature && request.signature !== "0x" ? request.signature : DUMMY_SIGNATURE,
  });
  ctx.log.debug(
    { chainId: chain.chainId, source: "bundler", ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  const atLeast = (given: bigint | undefined, estimated: bigint) =>
    given !== undefined && given > estimated ? given : estimated;
  return {
    ...userOp,
    callGasLimit: atLeast(userOp.callGasLimit, estimate.callGasLimit),
    verificationGasLimit: atLeast(userOp.verificationGasLimit, estimate.verificationGasLimit),
    preVerificationGas: atLeast(userOp.preVerificationGas, estimate.preVerificationGas),
    paymasterVerificationGasLimit: atLeast(
      userOp.paymasterVerificationGasLimit,
      estimate.paymasterVerificationGasLimit ?? 0n,
    ),
  };
}

type WithFees = PartialUserOperationV07 & { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

function requireFees(userOp: PartialUserOperationV07): WithFees {
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  return userOp as WithFees;
}

/**
 * The signature covers the gas values and fees, so all must be there; the paymaster's limits are ours to set (the
 * verifying paymaster's unless `limits` gives another paymaster's).
 */
export function asGivenV07(
  userOp: PartialUserOperationV07,
  limits: (given: PartialUserOperationV07) => PaymasterGasLimits = paymasterGasLimitsV07,
): SignableUserOperationV07 {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(`params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits`);
  }
  requireFees(userOp);
  return { ...userOp, ...limits(userOp) } as SignableUserOperationV07;
}

/** Every gas limit and fee sent: nothing to estimate. */
export function hasGasV07(userOp: PartialUserOperationV07): boolean {
  return [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].every((field) => userOp[field] !== undefined);
}
