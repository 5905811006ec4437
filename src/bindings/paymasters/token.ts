// Our token paymaster as a paymaster kind (paymasterKind.ts): the sender pays in an ERC-20 token, so none of SPONSORED
// mode's rules apply (no funding wallet, policy, spending limit or webhook); the one check is that the sender holds
// the most the operation can be charged. The signature commits to the token terms, fixed before the decision (the
// price read now, the window cut to the price's own end).
import type { Address } from "viem";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { Rule } from "../../sponsorship/rule";
import type { EntryPointVersion } from "../entryPoints/entryPointVersion";
import type { OperationReading } from "../entryPoints/operationReading";
import type { PaymasterGasLimits } from "./paymasterAndDataV07";
import type { PaymasterKind } from "./paymasterKind";
import {
  encodeTokenPaymasterData,
  TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  type TokenFeeTerms,
  tokenAmountForWei,
  tokenHashedTerms,
} from "./tokenPaymasterAndData";
import {
  TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
} from "./tokenPaymasterAndDataV07";

/**
 * The token paymaster's two gas limits: validation at least our figure (more when the client or its bundler asks for
 * more: unused validation gas costs nothing), postOp always ours, since the hash binds it and too low reverts postOp.
 */
export function tokenPaymasterGasLimits(given: { paymasterVerificationGasLimit?: bigint }): PaymasterGasLimits {
  const verification = given.paymasterVerificationGasLimit;
  return {
    paymasterVerificationGasLimit:
      verification !== undefined && verification > TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT
        ? verification
        : TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
    paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  };
}

/**
 * The most the token paymaster can charge for `op` under `version`, in the token's base units: the prefund, plus the
 * contract's postOp overhead where the prefund does not count postOp (v0.6), at the rate with the markup. Validation
 * requires the sender to hold it, so it is also a quote's maximum fee.
 */
export function maxTokenCost(
  version: Pick<OperationReading, "worstCaseCostWei"> & Pick<EntryPointVersion<never>, "prefundCountsPostOp">,
  op: SponsoredUserOperation,
  terms: Pick<TokenFeeTerms, "exchangeRate" | "priceMarkup">,
): bigint {
  const overhead = version.prefundCountsPostOp ? 0n : TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * (op.maxFeePerGas ?? 0n);
  return tokenAmountForWei(version.worstCaseCostWei(op) + overhead, terms.exchangeRate, terms.priceMarkup);
}

/**
 * The least verificationGasLimit an ERC20-mode operation is signed with on EntryPoint v0.6, which gives postOp that
 * much gas: the token paymaster's postOp (a transferFrom, its event, and the retry after a reverted call) measured up
 * to 38,247 gas on anvil (contracts/TokenPaymaster.sol, POST_OP_OVERHEAD_GAS), plus the 10,000 it keeps back from the
 * token call. An estimate below this (a deployed account with a cheap validation) is raised to it.
 */
export const TOKEN_POSTOP_MIN_VERIFICATION_GAS = 60_000n;

export interface TokenPaymasterRequest {
  terms: TokenFeeTerms;
  /**
   * The sender's balance check for its maximum charge (src/sponsorship/rules/tokenBalance.ts): ERC20 mode's one rule,
   * handed in because it reads the chain, which this kind does not.
   */
  balanceRule: (sender: Address, maximum: bigint) => Rule;
}

/** The kind for one request's token and terms. */
export function tokenPaymaster(request: TokenPaymasterRequest): PaymasterKind<TokenFeeTerms> {
  const { terms, balanceRule } = request;
  const rules = <Op extends SponsoredUserOperation>(op: Op, version: EntryPointVersion<Op>): Rule[] => [
    balanceRule(op.sender, maxTokenCost(version, op, terms)),
  ];
  return {
    mode: "ERC20",
    contractName: "token paymaster",
    // The user pays, so no deposit is held against the signature.
    holdsDeposit: false,
    // The price quote the terms carry is good for a time, not for a number of blocks.
    signsBlockWindows: false,
    rules: (_sponsoredRules, op, version) => rules(op, version),
    // The stub weighs the balance against the operation at its cheapest: a sender short even then is refused before
    // the user signs.
    stubRules: (_cheapRules, op, version) => rules(op, version),
    refusalIsError: true,
    feeToken: terms.feeToken,
    validationReadsSender: true,
    postOpGasFromVerification: TOKEN_POSTOP_MIN_VERIFICATION_GAS,
    terms: () => terms,
    hashedTerms: tokenHashedTerms,
    encodeData: (signed, signature) => encodeTokenPaymasterData({ ...signed, signature }),
    gasLimits: tokenPaymasterGasLimits,
  };
}
