// Our up-front token paymaster as a paymaster kind (paymasterKind.ts): the sender pays in an ERC-20 token, taken in
// validation (PermitTokenPaymasterV07), so none of SPONSORED mode's rules apply. Its checks: the sender holds the most
// the operation can be charged, and either its allowance to this paymaster covers that already or the terms carry an
// EIP-2612 permit that grants it (checked before anything is signed). The signature commits to the token terms and to
// the permit's bytes; on v0.9 the contract also reads it apart from paymasterData, so ERC20 mode can sign in parallel.
import type { Address } from "viem";
import { bytesHashWord } from "../../abi/abiWords";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { Rule } from "../../sponsorship/rule";
import type { EntryPointVersion } from "../entryPoints/entryPointVersion";
import type { PaymasterGasLimits } from "./paymasterAndDataV07";
import type { PaymasterKind } from "./paymasterKind";
import {
  encodeCarriedPermit,
  encodePermitTokenPaymasterData,
  PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
  type PermitTokenTerms,
} from "./permitTokenPaymasterAndData";
import { maxTokenCost } from "./token";
import { tokenHashedTerms } from "./tokenPaymasterAndData";

/**
 * The up-front token paymaster's two gas limits: validation at least our figure (more when the client or its bundler
 * asks: an account whose ERC-1271 check costs more needs it, and unused validation gas is refunded with the prefund),
 * postOp always ours, since the hash binds it and a postOp that runs out of gas keeps the whole prefund.
 */
export function permitTokenPaymasterGasLimits(given: { paymasterVerificationGasLimit?: bigint }): PaymasterGasLimits {
  const verification = given.paymasterVerificationGasLimit;
  return {
    paymasterVerificationGasLimit:
      verification !== undefined && verification > PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT
        ? verification
        : PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
    paymasterPostOpGasLimit: PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  };
}

/** The permit's bytes as the contract hashes them: keccak256 of value ++ signature, after the token terms. */
export function permitTokenHashedTerms(terms: PermitTokenTerms): string {
  return tokenHashedTerms(terms) + bytesHashWord("permit", encodeCarriedPermit(terms.permit));
}

export interface PermitTokenPaymasterRequest {
  /** The contract: the EntryPoint's up-front token paymaster. */
  paymaster: Address;
  terms: PermitTokenTerms;
  /** The sender's balance check for its maximum charge (src/sponsorship/rules/tokenBalance.ts), as the token kind's. */
  balanceRule: (sender: Address, maximum: bigint) => Rule;
  /**
   * How the sender grants the maximum to this paymaster (src/sponsorship/rules/tokenPermit.ts): the permit carried,
   * checked to work, or without one the allowance it has already given.
   */
  grantRule: (sender: Address, maximum: bigint) => Rule;
}

/** The kind for one request's token, terms and permit. */
export function permitTokenPaymaster(request: PermitTokenPaymasterRequest): PaymasterKind<PermitTokenTerms> {
  const { terms, balanceRule, grantRule } = request;
  const maximum = <Op extends SponsoredUserOperation>(op: Op, version: EntryPointVersion<Op>) =>
    maxTokenCost(version, op, terms);
  return {
    mode: "ERC20",
    contractName: "up-front token paymaster",
    paymaster: request.paymaster,
    // The user pays, so no deposit is held against the signature.
    holdsDeposit: false,
    // The price quote the terms carry is good for a time, not for a number of blocks.
    signsBlockWindows: false,
    // The balance first: a sender short of tokens is told so whatever its permit.
    rules: (_sponsoredRules, op, version) => [
      balanceRule(op.sender, maximum(op, version)),
      grantRule(op.sender, maximum(op, version)),
    ],
    // A permit carried is checked at the stub already, so that one that cannot work is refused before the bundler
    // is asked to estimate an operation whose validation would revert.
    stubRules: (_cheapRules, op, version) => [
      balanceRule(op.sender, maximum(op, version)),
      grantRule(op.sender, maximum(op, version)),
    ],
    refusalIsError: true,
    feeToken: terms.feeToken,
    validationReadsSender: true,
    // No v0.6 contract exists: the version's postOp limit is the one that counts.
    postOpGasFromVerification: PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
    terms: () => terms,
    hashedTerms: permitTokenHashedTerms,
    encodeData: (signed, signature) => encodePermitTokenPaymasterData({ ...signed, signature }),
    encodeTermsAlone: (signed) => encodePermitTokenPaymasterData({ ...signed, signature: "0x" }),
    gasLimits: permitTokenPaymasterGasLimits,
  };
}
