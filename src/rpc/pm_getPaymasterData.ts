import { paymasterData } from "../actions/paymasterData";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterDataResult, PaymasterDataResultV07 } from "../schemas/rpc/pm_getPaymasterData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterFieldsResult } from "./paymasterFieldsV07";

/**
 * ERC-7677 `pm_getPaymasterData` (src/actions/paymasterData.ts): the signed paymasterAndData (v0.6) or paymaster
 * fields (v0.7/v0.8), the token paymaster's when the context names a fee token, or an error with the reason (this
 * method has no `0x` result for a refusal).
 */
export const pm_getPaymasterData: RpcMethod = async (params, ctx) => {
  const request = parseErc7677Params(params, ctx);
  ctx.decision.mode = request.mode.mode === "ERC20" ? "erc20" : "sponsored";
  const sponsorship = await paymasterData(ctx, request);
  if (sponsorship.answer.reason !== undefined) {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${sponsorship.answer.reason}`);
  }
  if (sponsorship.version === "0.6") {
    const result: PaymasterDataResult = { paymasterAndData: sponsorship.answer.paymasterAndData };
    return result;
  }
  const result: PaymasterDataResultV07 = paymasterFieldsResult(sponsorship.answer);
  return result;
};
