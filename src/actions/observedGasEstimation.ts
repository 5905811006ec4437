import { estimateUserOperationGas } from "../gasEstimation/gasEstimation";
import { OperationRevertedError } from "../gasEstimation/gasEstimationErrors";
import type { ActionContext } from "./context";

/** estimateUserOperationGas, timed and counted in the gas-estimation metrics of the service. */
export async function observedGasEstimate(
  ctx: Pick<ActionContext, "metrics">,
  input: Parameters<typeof estimateUserOperationGas>[0],
): ReturnType<typeof estimateUserOperationGas> {
  const chainId = String(input.chain.chainId);
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  try {
    const estimate = await estimateUserOperationGas(input);
    ctx.metrics?.gasEstimationSeconds.observe({ chain_id: chainId, outcome: "ok" }, elapsed());
    return estimate;
  } catch (error) {
    // A revert is the operation's fault and says nothing about the chain; anything else means the estimate was not had.
    const kind = error instanceof OperationRevertedError ? "reverted" : "unavailable";
    ctx.metrics?.gasEstimationSeconds.observe({ chain_id: chainId, outcome: kind }, elapsed());
    ctx.metrics?.gasEstimationFailures.inc({ chain_id: chainId, kind });
    throw error;
  }
}
