import { quoteErc20 } from "./erc20Mode";
import type { RpcMethod } from "./methodContext";
import { parseModeParams } from "./mode";
import { bytes, type Fields } from "./params";
import { pm_sponsorUserOperation } from "./pm_sponsorUserOperation";
import { parseUserOperation } from "./userOperationInput";

/**
 * `pm_getFeeQuoteOrData` (and its misspelling `pm_getFeeQuotesOrData`): in mode ERC20 the fee quotes of the requested
 * tokens (src/rpc/erc20Mode.ts), nothing signed; in SPONSORED mode the same answer as pm_sponsorUserOperation.
 */
export const pm_getFeeQuoteOrData: RpcMethod = async (params, ctx) => {
  // In the order pm_sponsorUserOperation reads them, so that both name the same first problem.
  const userOp = parseUserOperation(params[0]);
  const { mode } = parseModeParams(params);
  if (mode.mode !== "ERC20") return pm_sponsorUserOperation(params, ctx);
  return quoteErc20(userOp, bytes((params[0] as Fields).signature, "params[0].signature"), mode, ctx);
};
