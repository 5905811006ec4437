import type { SponsoringChain } from "../chain/sponsoringChains";
import { invalidParams, RESOURCE_UNAVAILABLE, RpcError } from "../errors";
import { estimateUserOperationGas } from "../gasEstimation/gasEstimation";
import { EstimationUnavailableError, OperationRevertedError } from "../gasEstimation/gasEstimationErrors";
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

/**
 * What a failed estimate means to the client: a revert is the operation's fault (-32602); an unreachable node or
 * bundler is transient (-32002, HTTP 503, which clients retry). Anything else is rethrown as is.
 */
export function estimationFailure(error: unknown, chain: SponsoringChain, ctx: Pick<ActionContext, "log">): unknown {
  if (error instanceof OperationRevertedError) return invalidParams(`Gas estimation failed: ${error.message}`);
  if (error instanceof EstimationUnavailableError) {
    ctx.log.warn({ chainId: chain.chainId, reason: error.message }, "gas estimation unavailable");
    return new RpcError(
      RESOURCE_UNAVAILABLE,
      `Gas estimation is unavailable on chain ${chain.chainId}: ${error.message}`,
      503,
    );
  }
  return error;
}
