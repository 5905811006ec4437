// The one place where an error of the layers below (gas estimation, token prices, ERC20 mode's checks) becomes the
// JSON-RPC error a client sees. Those layers throw their own errors and never pick a wire code or a params label.
import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { INVALID_PARAMS, invalidParams, RESOURCE_UNAVAILABLE, RpcError } from "../errors";
import { EstimationUnavailableError, OperationRevertedError } from "../gasEstimation/gasEstimationErrors";
import { FeeTokenRefusedError } from "../tokens/erc20Terms";
import { PermitReadError } from "../tokens/permit";
import { PriceReadError, PriceUnavailableError } from "../tokens/price";

/**
 * What a failure means to the client: the operation's or the request's fault is -32602 (HTTP 400); a node, bundler or
 * price feed that cannot be asked now is transient, -32002 with HTTP 503, which clients retry. Anything else (an
 * RpcError already, or a bug) is returned as it is.
 */
export function toWireError(error: unknown, chain: SponsoringChain, log: FastifyBaseLogger): unknown {
  if (error instanceof OperationRevertedError) return invalidParams(`Gas estimation failed: ${error.message}`);
  if (error instanceof EstimationUnavailableError) {
    log.warn({ chainId: chain.chainId, reason: error.message }, "gas estimation unavailable");
    return new RpcError(
      RESOURCE_UNAVAILABLE,
      `Gas estimation is unavailable on chain ${chain.chainId}: ${error.message}`,
      503,
      { cause: error },
    );
  }
  if (error instanceof FeeTokenRefusedError || error instanceof PriceUnavailableError) {
    return new RpcError(INVALID_PARAMS, error.message, 400, { cause: error });
  }
  if (error instanceof PermitReadError) return new RpcError(RESOURCE_UNAVAILABLE, error.message, 503, { cause: error });
  if (error instanceof PriceReadError) return new RpcError(RESOURCE_UNAVAILABLE, error.message, 503, { cause: error });
  return error;
}
