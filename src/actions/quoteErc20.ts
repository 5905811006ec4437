import type { Address } from "viem";
import type { TokenConfig } from "../config";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { priceOf, requestedTokens, signingWindow, tokenChain } from "../tokens/erc20Terms";
import { feeQuote, feeTerms } from "../tokens/quote";
import type { ActionContext } from "./context";
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
export async function quoteErc20(ctx: ActionContext, request: Erc20Request): Promise<Erc20Quote> {
  const chain = tokenChain(ctx.chain);
  const { tokens, unsupported } = requestedTokens(request.tokenInfo, chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const window = signingWindow(nowMs, request.expirySeconds);
  // Each token on its own: its price, and (calculateGasLimits) a simulation with its stub, which the contract refuses
  // when the sender holds none of it.
  const outcomes = await Promise.all(
    tokens.map(async (token): Promise<{ quote: FeeQuote } | { token: TokenConfig; error: unknown }> => {
      try {
        const terms = feeTerms(token, await priceOf(chain, token, nowMs), window);
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
        return { quote };
      } catch (error) {
        return { token, error };
      }
    }),
  );
  const feeQuotes = outcomes.flatMap((outcome) => ("quote" in outcome ? [outcome.quote] : []));
  const failed = outcomes.flatMap((outcome) => ("error" in outcome ? [outcome] : []));
  if (feeQuotes.length === 0 && failed[0]) throw failed[0].error;
  for (const { token, error } of failed) {
    ctx.log.warn(
      { chainId: chain.chainId, token: token.address, reason: (error as Error).message },
      "token not quoted",
    );
    unsupported.push(token.address);
  }
  return { paymasterAddress: chain.tokenPaymaster, feeQuotes, unsupportedTokens: unsupported };
}
