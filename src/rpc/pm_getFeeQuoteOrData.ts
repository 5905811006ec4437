import { quoteErc20 } from "../actions/quoteErc20";
import type { Erc20QuoteResult } from "../schemas/rpc/pm_getFeeQuoteOrData";
import type { RpcMethod } from "./methodContext";
import { parseModeParams } from "./mode";
import { pm_sponsorUserOperation, refuseV07InModeObjectForm } from "./pm_sponsorUserOperation";
import { readUserOperation } from "./userOperationInput";

/**
 * `pm_getFeeQuoteOrData` (and its misspelling `pm_getFeeQuotesOrData`): in mode ERC20 the fee quotes of the requested
 * tokens (src/actions/quoteErc20.ts), nothing signed; in SPONSORED mode the same answer as pm_sponsorUserOperation.
 */
export const pm_getFeeQuoteOrData: RpcMethod = async (params, ctx) => {
  // In the order pm_sponsorUserOperation reads them, so that both name the same first problem.
  refuseV07InModeObjectForm(params);
  const { userOp, signature } = readUserOperation(params[0]);
  const { mode } = parseModeParams(params);
  if (mode.mode !== "ERC20") return pm_sponsorUserOperation(params, ctx);
  const quote = await quoteErc20(ctx, { ...mode, userOp, signature });
  const result: Erc20QuoteResult = { mode: "ERC20", MODE: "ERC20", ...quote };
  return result;
};
