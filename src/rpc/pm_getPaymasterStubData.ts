import { stubPaymasterAndData } from "../chain/gasEstimationStub";
import type { PaymasterStubDataResult } from "../schemas/rpc/pm_getPaymasterStubData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { stubTerms } from "./pm_sponsorUserOperation";
import { RpcError, SPONSORSHIP_REFUSED } from "./rpcError";

/**
 * ERC-7677 `pm_getPaymasterStubData`: what the client puts in the operation while its bundler estimates gas. It is our
 * 276-byte paymasterAndData with a signature that recovers to nobody, byte for byte the length of the final one, so
 * the estimate pays for the same calldata. Nothing is decided or signed yet: pm_getPaymasterData does both.
 */
export const pm_getPaymasterStubData: RpcMethod = async (params, ctx) => {
  const { mode } = parseErc7677Params(params, ctx);
  const paymaster = ctx.chain.verifyingPaymaster;
  if (!paymaster) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: no verifying paymaster is configured for chain ${ctx.chain.chainId} (${ctx.chain.name})`,
    );
  }
  const result: PaymasterStubDataResult = {
    paymasterAndData: stubPaymasterAndData({ paymaster, ...stubTerms(ctx, mode.expirySeconds) }),
    isFinal: false,
  };
  return result;
};
