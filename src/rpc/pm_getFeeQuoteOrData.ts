import { quote } from "../actions/quote";
import type { Erc20QuoteResult } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { laterEntryPoint } from "./entryPointChoice";
import type { RpcMethod } from "./methodContext";
import { parseModeParams } from "./mode";
import { pm_sponsorUserOperation, refuseV07InModeObjectForm } from "./pm_sponsorUserOperation";
import { asksForToken, parseQuoteContext } from "./tokenContext";
import { readUserOperation } from "./userOperationInput";
import { readUserOperationV07 } from "./userOperationV07Input";

/** A v0.7/v0.8 context that asks for quotes rather than a sponsorship. */
function asksForQuote(context: unknown): boolean {
  if (asksForToken(context)) return true;
  if (typeof context !== "object" || context === null) return false;
  const fields = context as Record<string, unknown>;
  return (
    (fields.tokenList !== undefined && fields.tokenList !== null) ||
    (fields.preferredToken !== undefined && fields.preferredToken !== null)
  );
}

/**
 * `pm_getFeeQuoteOrData` (and its misspelling `pm_getFeeQuotesOrData`): in mode ERC20 the fee quotes of the requested
 * tokens (src/actions/quote.ts), nothing signed; in SPONSORED mode the same answer as pm_sponsorUserOperation.
 * For a v0.7/v0.8 operation the form is `[userOp, entryPoint, context]`, and a context with `token`, `preferredToken`,
 * `tokenList` or mode ERC20 asks for quotes from that version's token paymaster.
 */
export const pm_getFeeQuoteOrData: RpcMethod = async (params, ctx) => {
  const later = laterEntryPoint(ctx.chain, params[1], asksForQuote(params[2]) ? "token" : "verifying");
  if (later) {
    if (!asksForQuote(params[2])) return pm_sponsorUserOperation(params, ctx);
    const { userOp, signature } = readUserOperationV07(params[0], later.version);
    const { expirySeconds, selection } = parseQuoteContext(params[2], "params[2]");
    const quoted = await quote(ctx, {
      version: later.version,
      target: later,
      userOp,
      signature,
      expirySeconds,
      selection,
    });
    const result: Erc20QuoteResult = { mode: "ERC20", MODE: "ERC20", ...quoted };
    return result;
  }
  // In the order pm_sponsorUserOperation reads them, so that both name the same first problem.
  refuseV07InModeObjectForm(params);
  const { userOp, signature } = readUserOperation(params[0]);
  const { mode } = parseModeParams(params);
  if (mode.mode !== "ERC20") return pm_sponsorUserOperation(params, ctx);
  const quoted = await quote(ctx, {
    version: "0.6",
    userOp,
    signature,
    expirySeconds: mode.expirySeconds,
    calculateGasLimits: mode.calculateGasLimits,
    selection: mode.tokenInfo,
  });
  const result: Erc20QuoteResult = { mode: "ERC20", MODE: "ERC20", ...quoted };
  return result;
};
