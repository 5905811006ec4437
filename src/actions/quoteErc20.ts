import type { Address } from "viem";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { requestedTokens, termsNow, tokenChain } from "../tokens/erc20Terms";
import { feeQuote } from "../tokens/quote";
import type { ActionContext } from "./context";
import { quoteEachToken } from "./quoteEachToken";
import type { Erc20Request } from "./sponsorErc20";
import { withTokenGas } from "./tokenGas";

export interface Erc20Quote {
  /** The spender the client approves: the token paymaster. */
  paymasterAddress: Address;
  feeQuotes: FeeQuote[];
  /** Requested addresses this chain takes no fee in (or cannot price now), lowercase. */
  unsupportedTokens: string[];
}

/**
 * ERC20 mode's quote, nothing signed: a quote per token of `tokenInfo.preferredToken` (that one only), else of
 * `tokenInfo.tokenList`, else of every token the chain supports. Requested tokens the chain does not support, or
 * cannot quote now while others can (no usable price; a simulation the token paymaster refuses), are listed in
 * unsupportedTokens; when no token can be quoted, the first one's reason is the error.
 */
export async function quoteErc20(
  ctx: ActionContext,
  request: Omit<Erc20Request, "feeTokenLabel">,
): Promise<Erc20Quote> {
  const chain = tokenChain(ctx.chain);
  const { tokens, unsupported } = requestedTokens(request.tokenInfo, chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const feeQuotes = await quoteEachToken(ctx, tokens, unsupported, async (token) => {
    const terms = await termsNow(chain, token, nowMs, request.expirySeconds);
    // With calculateGasLimits, a simulation with this token's stub in.
    const { userOp: gas } = await withTokenGas(
      request.userOp,
      request.signature,
      request.calculateGasLimits,
      ctx,
      chain,
      terms,
      "quote",
    );
    const { maxTokenCost: _, ...quote } = feeQuote(token, terms, gas);
    return quote;
  });
  return { paymasterAddress: chain.tokenPaymaster, feeQuotes, unsupportedTokens: unsupported };
}
