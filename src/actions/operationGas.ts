// The gas a v0.6 operation in SPONSORED mode is signed over: as the client sent it, or estimated first.
import type { Hex } from "viem";
import type { SignableUserOperation } from "../bindings/entryPoints/v06";
import { invalidParams } from "../errors";
import { canEstimateGas } from "../gasEstimation/gasEstimation";
import {
  FEE_FIELDS,
  GAS_LIMIT_FIELDS,
  type PartialUserOperation,
  zeroGasLimits,
} from "../sponsorship/partialUserOperation";
import type { ActionContext } from "./context";
import { observedGasEstimate } from "./observedGasEstimation";
import { stubTerms } from "./stub";

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

/**
 * `calculateGasLimits` true: the three limits are estimated (src/gasEstimation/gasEstimation.ts). A limit the client
 * sent is a lower bound: the estimate raises a limit that is too low and keeps one that is higher. Missing fees are
 * chosen by the chain.
 */
export async function withEstimatedGas(
  ctx: ActionContext,
  request: { userOp: PartialUserOperation; signature: Hex; expirySeconds: number },
): Promise<{ userOp: SignableUserOperation; feesChosen: boolean; l1DataGas: bigint }> {
  const { userOp } = request;
  const missing = [
    ...GAS_LIMIT_FIELDS.filter((field) => !userOp[field]),
    ...FEE_FIELDS.filter((field) => userOp[field] === undefined),
  ];
  const { chain } = ctx;
  if (!canEstimateGas(chain)) {
    // Nothing to estimate for: sign over what was sent, as without calculateGasLimits.
    if (missing.length === 0) return { userOp: userOp as SignableUserOperation, feesChosen: false, l1DataGas: 0n };
    const why = chain.verifyingPaymaster ? "it has no RPC or bundler configured" : "it has no verifying paymaster";
    throw invalidParams(
      `Chain ${chain.chainId} (${chain.name}) cannot estimate gas: ${why}; send the gas limits and fees ` +
        `(missing: ${missing.join(", ")})`,
    );
  }
  const started = performance.now();
  const estimate = await observedGasEstimate(ctx, {
    chain,
    userOp,
    signature: request.signature,
    // The window the engine (sponsorOperation) will sign, to the second or nearly: the stub has the final bytes.
    terms: stubTerms(ctx, request.expirySeconds),
  });
  ctx.log.debug(
    { chainId: chain.chainId, source: estimate.source, ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  const { source: _, l1DataGas, ...values } = estimate;
  return {
    userOp: { ...userOp, ...values },
    feesChosen: userOp.maxFeePerGas === undefined || userOp.maxPriorityFeePerGas === undefined,
    l1DataGas,
  };
}
