// The gas a v0.7/v0.8/v0.9 operation is signed or quoted over: as the client sent it, or the account's gas estimated by
// the chain's bundler or node; the paymaster's own limits are the paymaster kind's to set.
import type { Hex } from "viem";
import type { SignableUserOperationV07 } from "../bindings/entryPoints/v07";
import type { PaymasterGasLimits } from "../bindings/paymasters/paymasterAndDataV07";
import { paymasterGasLimitsV07 } from "../bindings/paymasters/verifyingPaymasterGasV07";
import { invalidParams } from "../errors";
import { canEstimateGasV07 } from "../gasEstimation/gasEstimationV07";
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import { observedGasEstimateV07 } from "./observedGasEstimation";
import { refuseZeroGas } from "./operationGas";
import type { EntryPointV07, PaymasterFieldsV07 } from "./stepRequest";

/** An operation with its gas filled in, and the L1 data fee's part of its preVerificationGas where it was estimated. */
export interface WithGasV07 {
  userOp: PartialUserOperationV07;
  /** The L1 part the service computed (0 where the chain has none); absent when nothing was estimated. */
  l1DataGas?: bigint;
}

/** The gas limits missing from the operation: not sent, or sent as zero (an operation with no gas is never mined). */
function missingGasV07(userOp: PartialUserOperationV07): string[] {
  return GAS_LIMIT_FIELDS.filter((field) => !userOp[field]);
}

/**
 * The operation with the account's gas estimated (src/gasEstimation/gasEstimationV07.ts: the chain's bundler, else its
 * node by simulation), with `stub`, our paymaster fields of the final length, in it so the estimate pays for them;
 * what the client sent is a lower bound. Estimated when the chain has a bundler, when the client asks
 * (`calculateGasLimits`), or when a limit is missing or zero; otherwise the operation is returned as it came. A chain
 * with neither node nor bundler refuses an operation that lacks gas, naming the fields.
 */
export async function estimatedV07(
  ctx: ActionContext,
  request: { target: EntryPointV07; userOp: PartialUserOperationV07; signature?: Hex; calculateGasLimits?: boolean },
  stub: PaymasterFieldsV07,
): Promise<WithGasV07> {
  const { chain } = ctx;
  const missing = missingGasV07(request.userOp);
  const wanted = chain.bundlerUrl !== undefined || request.calculateGasLimits === true || missing.length > 0;
  if (!wanted) return { userOp: request.userOp };
  if (!canEstimateGasV07(chain)) {
    if (missing.length === 0) return { userOp: request.userOp };
    throw invalidParams(
      `params[0] is missing ${missing.join(", ")} (or sent it as 0): chain ${chain.chainId} (${chain.name}) has ` +
        "neither a node (rpcUrl) nor a bundler (bundlerUrl) to estimate gas with, so send the gas limits",
    );
  }
  const userOp = requireFees(request.userOp);
  const started = performance.now();
  const estimate = await observedGasEstimateV07(ctx, {
    chain,
    version: request.target.version,
    entryPoint: request.target.entryPoint,
    userOp: { ...userOp, ...stub },
    ...(request.signature ? { signature: request.signature } : {}),
  });
  ctx.log.debug(
    { chainId: chain.chainId, source: estimate.source, ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  const atLeast = (given: bigint | undefined, estimated: bigint) =>
    given !== undefined && given > estimated ? given : estimated;
  return {
    userOp: {
      ...userOp,
      callGasLimit: estimate.callGasLimit,
      verificationGasLimit: estimate.verificationGasLimit,
      preVerificationGas: estimate.preVerificationGas,
      paymasterVerificationGasLimit: atLeast(
        userOp.paymasterVerificationGasLimit,
        estimate.paymasterVerificationGasLimit ?? 0n,
      ),
    },
    l1DataGas: estimate.l1DataGas,
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
  refuseZeroGas(userOp);
  return { ...userOp, ...limits(userOp) } as SignableUserOperationV07;
}

/** Every gas limit (none of them zero) and fee sent: nothing to estimate. */
export function hasGasV07(userOp: PartialUserOperationV07): boolean {
  return missingGasV07(userOp).length === 0 && FEE_FIELDS.every((field) => userOp[field] !== undefined);
}
