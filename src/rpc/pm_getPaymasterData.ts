import type { PaymasterDataResult } from "../schemas/rpc/pm_getPaymasterData";
import { sponsor } from "../sponsorship/sponsor";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { asGiven } from "./pm_sponsorUserOperation";
import { RpcError, SPONSORSHIP_REFUSED } from "./rpcError";

/**
 * ERC-7677 `pm_getPaymasterData`: the operation arrives with its estimated gas, and every rule of SPONSORED mode
 * decides as for pm_sponsorUserOperation over exactly those values; the answer is the signed paymasterAndData, or a
 * -32003 error with the rule's reason (this method has no `0x` result for a refusal).
 */
export const pm_getPaymasterData: RpcMethod = async (params, ctx) => {
  const { userOp, mode } = parseErc7677Params(params, ctx);
  ctx.decision.mode = "sponsored";
  const answer = await sponsor(ctx.deps, {
    setup: ctx.setup,
    chain: ctx.chain,
    userOp: asGiven(userOp),
    expirySeconds: mode.expirySeconds,
    smartAccount: mode.smartAccount,
    webhookData: mode.webhookData,
  });
  ctx.decision.refusedBy = answer.refusedBy;
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  const result: PaymasterDataResult = { paymasterAndData: answer.paymasterAndData };
  return result;
};
