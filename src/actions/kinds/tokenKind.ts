// ERC20 mode as a step asks for it: our token paymaster (src/bindings/paymasters/token.ts) for the fee token named,
// at its price now; the sender pays, and its one rule is the sender's balance (src/sponsorship/rules/tokenBalance.ts).
import { tokenPaymaster } from "../../bindings/paymasters/token";
import type { TokenFeeTerms } from "../../bindings/paymasters/tokenPaymasterAndData";
import type { TokenConfig } from "../../config";
import { type TokenBalanceCheck, tokenBalanceRule } from "../../sponsorship/rules/tokenBalance";
import { feeToken, type TokenChain, termsNow, tokenChain } from "../../tokens/erc20Terms";
import type { ActionContext } from "../context";
import type { KindChoice } from "../stepRequest";

export interface TokenRequest {
  expirySeconds: number;
  calculateGasLimits?: boolean;
  /** The fee token as the client sent it: checked to be one of the chain's. */
  feeToken: string | null | undefined;
  /** Where the request names it, for the error that refuses it. */
  feeTokenLabel: string;
}

export function tokenKind(request: TokenRequest): KindChoice {
  return {
    decisionMode: "erc20",
    expirySeconds: request.expirySeconds,
    calculateGasLimits: request.calculateGasLimits === true,
    choose: async (ctx) => {
      const chain = tokenChain(ctx.chain);
      const token = feeToken(request.feeToken, chain, request.feeTokenLabel);
      const terms = await termsNow(chain, token, ctx.deps.now(), request.expirySeconds);
      return tokenKindWithTerms(ctx, chain, token, terms);
    },
  };
}

/** The token paymaster for one token and its terms (a quote makes one per token it prices). */
export function tokenKindWithTerms(ctx: ActionContext, chain: TokenChain, token: TokenConfig, terms: TokenFeeTerms) {
  const check: TokenBalanceCheck = { chain, token, terms, log: ctx.log };
  return tokenPaymaster({ terms, balanceRule: (sender, maximum) => tokenBalanceRule(check, sender, maximum) });
}
