import type { TokenFeeTerms } from "../bindings/paymasters/tokenPaymasterAndData";
import type { TokenConfig } from "../config";
import { feeToken, type TokenChain, termsNow, tokenChain } from "../tokens/erc20Terms";
import type { ActionContext } from "./context";
import type { TokenKind } from "./stepRequest";

export interface TokenTerms {
  chain: TokenChain;
  token: TokenConfig;
  terms: TokenFeeTerms;
}

/**
 * The chain's fee token a request names (refused with the tokens the chain accepts) and its terms now: the price,
 * the window cut to the price's own end.
 */
export async function tokenTermsOf(
  ctx: ActionContext,
  mode: Pick<TokenKind, "feeToken" | "feeTokenLabel" | "expirySeconds">,
): Promise<TokenTerms> {
  const chain = tokenChain(ctx.chain);
  const token = feeToken(mode.feeToken, chain, mode.feeTokenLabel);
  const terms = await termsNow(chain, token, ctx.deps.now(), mode.expirySeconds);
  return { chain, token, terms };
}
