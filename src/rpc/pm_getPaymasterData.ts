import { getPaymasterData } from "../actions/getPaymasterData";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterDataResult } from "../schemas/rpc/pm_getPaymasterData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";

/**
 * ERC-7677 `pm_getPaymasterData` (src/actions/getPaymasterData.ts): the signed paymasterAndData, or a -32003 error
 * with the rule's reason (this method has no `0x` result for a refusal).
 */
export const pm_getPaymasterData: RpcMethod = async (params, ctx) => {
  const { userOp, mode } = parseErc7677Params(params, ctx);
  ctx.decision.mode = "sponsored";
  const answer = await getPaymasterData(ctx, { ...mode, userOp });
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  const result: PaymasterDataResult = { paymasterAndData: answer.paymasterAndData };
  return result;
};
