import { estimateUserOperationGas } from "../gasEstimation/gasEstimation";
import { OperationRevertedError } from "../gasEstimation/gasEstimationErrors";
import { estimateUserOperationGasV07 } from "../gasEstimation/gasEstimationV07";
import type { ActionContext } from "./context";

type Observing = Pick<ActionContext, "metrics">;

/** estimateUserOperationGas (v0.6), timed and counted in the gas-estimation metrics of the service. */
export function observedGasEstimate(
  ctx: Observing,
  input: Parameters<typeof estimateUserOperationGas>[0],
): ReturnType<typeof estimateUserOperationGas> {
  return observed(ctx, input.chain.chainId, () => estimateUserOperationGas(input));
}

/** estimateUserOperationGasV07 (v0.7 on), timed and counted the same way. */
export function observedGasEstimateV07(
  ctx: Observing,
  input: Parameters<typeof estimateUserOperationGasV07>[0],
): ReturnType<typeof estimateUserOperationGasV07> {
  return observed(ctx, input.chain.chainId, () => estimateUserOperationGasV07(input));
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
