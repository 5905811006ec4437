import { type EstimateRequest, estimateUserOperationGas } from "../gasEstimation/gasEstimation";
import { OperationRevertedError } from "../gasEstimation/gasEstimationErrors";
import { type EstimateRequestV07, estimateUserOperationGasV07 } from "../gasEstimation/gasEstimationV07";
import type { ActionContext } from "./context";

/** The service's metrics, and its clock, which the estimate is made at. */
type Observing = Pick<ActionContext, "metrics" | "deps">;

/** estimateUserOperationGas (v0.6) at the service's clock, timed and counted in the gas-estimation metrics. */
export function observedGasEstimate(
  ctx: Observing,
  input: Omit<EstimateRequest, "nowMs">,
): ReturnType<typeof estimateUserOperationGas> {
  return observed(ctx, input.chain.chainId, () => estimateUserOperationGas({ ...input, nowMs: ctx.deps.now() }));
}

/** estimateUserOperationGasV07 (v0.7 on), at the service's clock, timed and counted the same way. */
export function observedGasEstimateV07(
  ctx: Observing,
  input: Omit<EstimateRequestV07, "nowMs">,
): ReturnType<typeof estimateUserOperationGasV07> {
  return observed(ctx, input.chain.chainId, () => estimateUserOperationGasV07({ ...input, nowMs: ctx.deps.now() }));
}

async function observed<T>(ctx: Observing, chain: number, estimate: () => Promise<T>): Promise<T> {
  const chainId = String(chain);
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  try {
    const result = await estimate();
    ctx.metrics?.gasEstimationSeconds.observe({ chain_id: chainId, outcome: "ok" }, elapsed());
    return result;
  } catch (error) {
    // A revert is the operation's fault and says nothing about the chain; anything else means the estimate was not had.
    const kind = error instanceof OperationRevertedError ? "reverted" : "unavailable";
    ctx.metrics?.gasEstimationSeconds.observe({ chain_id: chainId, outcome: kind }, elapsed());
    ctx.metrics?.gasEstimationFailures.inc({ chain_id: chainId, kind });
    throw error;
  }
}
