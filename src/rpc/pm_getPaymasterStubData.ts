import { getPaymasterStubData } from "../actions/getPaymasterStubData";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterStubDataResult } from "../schemas/rpc/pm_getPaymasterStubData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";

/**
 * ERC-7677 `pm_getPaymasterStubData` (src/actions/getPaymasterStubData.ts): a stand-in paymasterAndData for the
 * bundler's estimate; nothing is decided or signed yet.
 */
export const pm_getPaymasterStubData: RpcMethod = async (params, ctx) => {
  const { mode } = parseErc7677Params(params, ctx);
  const paymasterAndData = getPaymasterStubData(ctx, mode.expirySeconds);
  if (!paymasterAndData) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: no verifying paymaster is configured for chain ${ctx.chain.chainId} (${ctx.chain.name})`,
    );
  }
  const result: PaymasterStubDataResult = { paymasterAndData, isFinal: false };
  return result;
};
