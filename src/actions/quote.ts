// ERC20 mode's quote (pm_getFeeQuoteOrData), nothing signed: per requested token, the most the token paymaster can
// charge for the operation under its EntryPoint version, over the gas the client sent or an estimate with that
// token's stub in. Before any price is read, the engine's checks that come before every rule: our token paymaster
// must pass its contract checks, as for a signature.
import type { Address } from "viem";
import { maxTokenCost } from "../bindings/paymasters/token";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { TokenInfo } from "../schemas/rpc/mode";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { failedCheck } from "../sponsorship/engine";
import { requestedTokens, termsNow, tokenChain } from "../tokens/erc20Terms";
import { quoteOfMaximum } from "../tokens/quote";
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import { tokenKindWithTerms } from "./kinds/tokenKind";
import { quoteEachToken } from "./quoteEachToken";
import type { StepOperation } from "./stepRequest";

export interface QuoteRequest {
  operation: StepOperation;
  expirySeconds: number;
  /** Estimate the gas first where the version signs what was sent by default (v0.6). */
  calculateGasLimits?: boolean;
  /** Which tokens: preferredToken (that one only), else tokenList, else every token of the chain. */
  selection: TokenInfo;
}

export interface Erc20Quote {
  /** The spender the client approves: the token paymaster. */
  paymasterAddress: Address;
  feeQuotes: FeeQuote[];
  /** Requested addresses this chain takes no fee in (or cannot price now), lowercase. */
  unsupportedTokens: string[];
}

/**
 * A quote per requested token. Tokens the chain does not take, or cannot quote now while others can (no usable price;
 * a simulation the token paymaster refuses), are listed in unsupportedTokens; when none can be quoted, the first one's
 * reason is the error.
 */
export async function quote(ctx: ActionContext, request: QuoteRequest): Promise<Erc20Quote> {
  const { operation } = request;
  await admitRequest(ctx, operation.sender);
  const chain = tokenChain(ctx.chain);
  const paymaster = operation.target.paymaster ?? chain.tokenPaymaster;
  const failed = failedCheck(ctx.deps, ctx.chain, paymaster);
  if (failed) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${failed.reason}`);
  const { tokens, unsupported } = requestedTokens(request.selection, chain);
  const nowMs = ctx.deps.now();
  const choice = { calculateGasLimits: request.calculateGasLimits === true, expirySeconds: request.expirySeconds };
  const feeQuotes = await quoteEachToken(ctx, tokens, unsupported, async (token) => {
    const terms = await termsNow(chain, token, nowMs, request.expirySeconds);
    const kind = tokenKindWithTerms(ctx, chain, token, terms);
    const filled = await operation.fill(ctx, kind, { estimate: true, purpose: "quote", choice });
    const { maxTokenCost: _, ...quoted } = quoteOfMaximum(
      token,
      terms,
      maxTokenCost(operation.version, filled.userOp, terms),
    );
    return quoted;
  });
  return { paymasterAddress: paymaster, feeQuotes, unsupportedTokens: unsupported };
}
