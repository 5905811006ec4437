// ERC20 mode's one rule: the sender holds the most the token paymaster can charge the operation. It reads the chain,
// so it lives with the rules rather than in the token paymaster's kind (src/bindings/paymasters/token.ts), which
// only encodes and hashes.
import type { Address } from "viem";
import type { TokenFeeTerms } from "../../bindings/paymasters/tokenPaymasterAndData";
import type { TokenConfig } from "../../config";
import { erc20Outcome, requireBalance, type TokenChain } from "../../tokens/erc20Terms";
import type { Rule } from "../rule";

export interface TokenBalanceCheck {
  chain: TokenChain;
  token: TokenConfig;
  terms: TokenFeeTerms;
  log: { warn(object: object, message: string): void };
}

/** The rule for one request's token and terms, given the sender and its maximum charge in the token's units. */
export function tokenBalanceRule(check: TokenBalanceCheck, sender: Address, maximum: bigint): Rule {
  return {
    name: "ERC20",
    evaluate: async () => {
      await requireBalance(check.chain, check.token, sender, maximum, check.log);
      return erc20Outcome(check.token, check.terms, maximum);
    },
  };
}
