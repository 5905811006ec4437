import { tokenPaymasterAndDataV06 } from "../actions/erc20Erc7677V06";
import { tokenPaymasterDataV07 } from "../actions/erc20V07";
import { getPaymasterData } from "../actions/getPaymasterData";
import { getPaymasterDataV07 } from "../actions/paymasterV07";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterDataResult, PaymasterDataResultV07 } from "../schemas/rpc/pm_getPaymasterData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterFieldsResult } from "./paymasterFieldsV07";

/**
 * ERC-7677 `pm_getPaymasterData` (src/actions/getPaymasterData.ts, paymasterV07.ts): the signed paymasterAndData
 * (v0.6) or paymaster fields (v0.7/v0.8), the token paymaster's when the context names a fee token,, or an error with
 * the reason (this method has no `0x` result for a refusal).
 */
export const pm_getPaymasterData: RpcMethod = async (params, ctx) => {
  const request = parseErc7677Params(params, ctx);
  ctx.decision.mode = "sponsored";
  const { mode } = request;
  if (request.version !== "0.6") {
    if (mode.mode === "ERC20") {
      ctx.decision.mode = "erc20";
      const signed = await tokenPaymasterDataV07(ctx, { ...mode, target: request.target, userOp: request.userOp });
      const result: PaymasterDataResultV07 = paymasterFieldsResult(signed);
      return result;
    }
    const answer = await getPaymasterDataV07(ctx, { ...mode, target: request.target, userOp: request.userOp });
    if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
    const result: PaymasterDataResultV07 = paymasterFieldsResult(answer);
    return result;
  }
  if (mode.mode === "ERC20") {
    ctx.decision.mode = "erc20";
    const result: PaymasterDataResult = { paymasterAndData: await tokenPaymasterAndDataV06(ctx, request.userOp, mode) };
    return result;
  }
  const answer = await getPaymasterData(ctx, { ...mode, userOp: request.userOp });
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  const result: PaymasterDataResult = { paymasterAndData: answer.paymasterAndData };
  return result;
};
