import { packedOperation } from "../actions/operations/packedOperation";
import { unpackedOperation } from "../actions/operations/unpackedOperation";
import { quote } from "../actions/quote";
import type { Erc20QuoteResult } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { laterEntryPoint, v06Target } from "./entryPointChoice";
import type { RpcMethod } from "./methodContext";
import { parseModeParams } from "./mode";
import { sponsorParamsForm } from "./paramsForm";
import { sponsorByForm } from "./pm_sponsorUserOperation";
import { parseQuoteContext } from "./tokenContext";
import { readUserOperation } from "./userOperationInput";
import { readUserOperationV07 } from "./userOperationV07Input";

/**
 * `pm_getFeeQuoteOrData` (and its misspelling `pm_getFeeQuotesOrData`): in mode ERC20 the fee quotes of the requested
 * tokens (src/actions/quote.ts), nothing signed; in SPONSORED mode the same answer as pm_sponsorUserOperation.
 * For a v0.7/v0.8 operation the form is `[userOp, entryPoint, context]`, and a context with `token`, `preferredToken`,
 * `tokenList` or mode ERC20 asks for quotes from that version's token paymaster.
 */
export const pm_getFeeQuoteOrData: RpcMethod = async (params, ctx) => {
  const form = sponsorParamsForm(params);
  const later =
    form.form === "entryPoint"
      ? laterEntryPoint(ctx.chain, form.entryPoint, form.asksForQuote ? "token" : "verifying")
      : undefined;
  if (form.form === "entryPoint" && later) {
    if (!form.asksForQuote) return sponsorByForm(form, ctx);
    const { userOp, signature } = readUserOperationV07(form.userOp, later.version);
    const { expirySeconds, selection } = parseQuoteContext(form.context, "params[2]");
    const quoted = await quote(ctx, { operation: packedOperation(later, userOp, signature), expirySeconds, selection });
    const result: Erc20QuoteResult = { mode: "ERC20", MODE: "ERC20", ...quoted };
    return result;
  }
  // In the order pm_sponsorUserOperation reads them, so that both name the same first problem.
  const { userOp, signature } = readUserOperation(form.userOp);
  const { mode } = parseModeParams(form);
  if (mode.mode !== "ERC20") return sponsorByForm(form, ctx);
  const quoted = await quote(ctx, {
    operation: unpackedOperation(v06Target(ctx.chain, true), userOp, signature),
    expirySeconds: mode.expirySeconds,
    calculateGasLimits: mode.calculateGasLimits,
    selection: mode.tokenInfo,
  });
  const result: Erc20QuoteResult = { mode: "ERC20", MODE: "ERC20", ...quoted };
  return result;
};
