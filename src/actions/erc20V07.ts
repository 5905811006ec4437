// ERC20 mode for EntryPoint v0.7 and v0.8 operations (docs/erc20-mode.md, 'EntryPoint v0.7 and v0.8'): the chain's
// TokenPaymasterV07 for the version, the same checks as v0.6's ERC20 mode (the token is one of the chain's, its price
// now, the signing window, the sender's balance covers the most it can be charged), its paymaster fields signed and
// recorded. The allowance is not checked: the contract's validation reads the balance only, since the account's batch
// approves the token paymaster in the same operation.
import type { Hex } from "viem";
import type { TokenConfig } from "../config";
import { DUMMY_SIGNATURE } from "../gasEstimation/gasEstimationStub";
import type { TokenInfo } from "../schemas/rpc/mode";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import { cheapestCompletion } from "../sponsorship/eligibility";
import {
  getUserOpHashV07,
  packUserOperation,
  type UserOperationV07,
} from "../sponsorship/entryPoints/userOperationV07";
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../sponsorship/paymasters/paymasterAndDataV07";
import type { TokenFeeTerms } from "../sponsorship/paymasters/tokenPaymasterAndData";
import {
  encodeTokenPaymasterDataV07,
  getTokenPaymasterHashV07,
  maxTokenCostV07,
  TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
} from "../sponsorship/paymasters/tokenPaymasterAndDataV07";
import { worstCaseCostWeiV07 } from "../sponsorship/spendingLimit";
import type { SignableUserOperationV07 } from "../sponsorship/sponsorV07";
import {
  erc20Outcome,
  feeToken,
  priceOf,
  requestedTokens,
  requireBalance,
  signingWindow,
  tokenChain,
} from "../tokens/erc20Terms";
import { feeTerms, quoteOfMaximum } from "../tokens/quote";
import type { ActionContext } from "./context";
import { asGivenV07, type EntryPointV07, estimatedV07, type PaymasterFieldsV07 } from "./paymasterV07";
import { quoteEachToken } from "./quoteEachToken";

export interface TokenRequestV07 {
  /** The EntryPoint and, as its paymaster, our TokenPaymasterV07 for it. */
  target: EntryPointV07;
  userOp: PartialUserOperationV07;
  /** The account's signature as sent: sizes the bundler's estimate. */
  signature?: Hex;
  expirySeconds: number;
  /** The fee token's address as the client sent it (ERC-7677 context `token`). */
  feeToken: string;
}

export interface TokenAnswerV07 extends PaymasterFieldsV07 {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  /** The most the operation can be charged, in the token's base units: what the account approves at least. */
  maxTokenCost: bigint;
}

/**
 * The token paymaster's two gas limits: validation at least our figure (more when the client or its bundler asks for
 * more: unused validation gas costs nothing), postOp always ours, since the hash binds it and too low reverts postOp.
 */
function tokenPaymasterGasLimitsV07(given: { paymasterVerificationGasLimit?: bigint }): PaymasterGasLimits {
  const verification = given.paymasterVerificationGasLimit;
  return {
    paymasterVerificationGasLimit:
      verification !== undefined && verification > TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT
        ? verification
        : TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
    paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  };
}

async function termsOf(ctx: ActionContext, token: TokenConfig, expirySeconds: number): Promise<TokenFeeTerms> {
  const chain = tokenChain(ctx.chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  return feeTerms(token, await priceOf(chain, token, nowMs), signingWindow(nowMs, expirySeconds));
}

/** The chain's fee token the request names; refused with the tokens the chain accepts. */
function requestedToken(ctx: ActionContext, request: TokenRequestV07): TokenConfig {
  return feeToken({ feeTokenAddress: request.feeToken }, tokenChain(ctx.chain));
}

/**
 * ERC-7677's stub: the token paymaster, its gas limits, and paymasterData of the final length carrying the terms that
 * will be signed (today's price, so a bundler's simulation checks the sender's balance as validation will) with a
 * signature that recovers to nobody.
 */
export async function tokenStubFieldsV07(ctx: ActionContext, request: TokenRequestV07): Promise<PaymasterFieldsV07> {
  const token = requestedToken(ctx, request);
  const terms = await termsOf(ctx, token, request.expirySeconds);
  const stub = stubWithTerms(request, terms);
  // The sender cannot pay even the operation at its cheapest (gas not estimated yet counts as zero): refused now, in
  // the final request's words, rather than after the user signed.
  const cheapest = cheapestCompletion({
    ...request.userOp,
    paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit,
  });
  const least = maxTokenCostV07(cheapest, terms.exchangeRate, terms.priceMarkup);
  await requireBalance(tokenChain(ctx.chain), token, request.userOp.sender, least, ctx.log);
  return stub;
}

function stubWithTerms(request: TokenRequestV07, terms: TokenFeeTerms): PaymasterFieldsV07 {
  return {
    paymaster: request.target.paymaster,
    paymasterData: encodeTokenPaymasterDataV07({ ...terms, signature: DUMMY_SIGNATURE }),
    ...tokenPaymasterGasLimitsV07(request.userOp),
  };
}

/** ERC-7677's second step: the operation arrives with its gas; signed over exactly those values. */
export async function tokenPaymasterDataV07(ctx: ActionContext, request: TokenRequestV07): Promise<TokenAnswerV07> {
  const token = requestedToken(ctx, request);
  const terms = await termsOf(ctx, token, request.expirySeconds);
  return signV07(ctx, request, token, terms, asGivenV07(request.userOp, tokenPaymasterGasLimitsV07));
}

/** pm_sponsorUserOperation: the account's gas from the chain's bundler (with the token stub in), then signed. */
export async function sponsorTokenV07(ctx: ActionContext, request: TokenRequestV07): Promise<TokenAnswerV07> {
  const token = requestedToken(ctx, request);
  const terms = await termsOf(ctx, token, request.expirySeconds);
  const withGas = await estimatedV07(ctx, request, stubWithTerms(request, terms));
  return signV07(ctx, request, token, terms, asGivenV07(withGas, tokenPaymasterGasLimitsV07));
}

async function signV07(
  ctx: ActionContext,
  request: TokenRequestV07,
  token: TokenConfig,
  terms: TokenFeeTerms,
  userOp: SignableUserOperationV07,
): Promise<TokenAnswerV07> {
  const chain = tokenChain(ctx.chain);
  const { paymaster, entryPoint } = request.target;
  const limits = {
    paymasterVerificationGasLimit: userOp.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.paymasterPostOpGasLimit,
  };
  const maximum = maxTokenCostV07(userOp, terms.exchangeRate, terms.priceMarkup);
  await requireBalance(chain, token, userOp.sender, maximum, ctx.log);

  const complete: UserOperationV07 = { ...userOp, signature: "0x" };
  const hash = getTokenPaymasterHashV07(packUserOperation(complete), {
    ...terms,
    ...limits,
    chainId: chain.chainId,
    paymaster,
  });
  const paymasterData = encodeTokenPaymasterDataV07({ ...terms, signature: await ctx.deps.signer.signHash(hash) });
  // Every signature the service gives out is on record (the user pays, so no deposit is held against it).
  await ctx.deps.log.record({
    paymasterId: ctx.setup.paymasterId,
    chainId: chain.chainId,
    sender: userOp.sender,
    nonce: userOp.nonce,
    sponsored: true,
    userOpHash: getUserOpHashV07(
      { ...complete, paymaster, ...limits, paymasterData },
      entryPoint,
      chain.chainId,
      userOp.entryPointVersion,
    ),
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
    maxFeePerGas: userOp.maxFeePerGas,
    maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
    validUntil: terms.validUntil,
    validAfter: terms.validAfter,
    paymasterAddress: paymaster,
    entryPoint,
    mode: "ERC20",
    worstCaseWei: worstCaseCostWeiV07(userOp),
    ruleOutcomes: [erc20Outcome(token, terms, maximum)],
  });
  return {
    paymaster,
    paymasterData,
    ...limits,
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
    maxTokenCost: maximum,
  };
}

export interface TokenQuoteRequestV07 {
  target: EntryPointV07;
  userOp: PartialUserOperationV07;
  signature?: Hex;
  expirySeconds: number;
  /** Which tokens: preferredToken (that one only), else tokenList, else every token of the chain. */
  selection: TokenInfo;
}

/**
 * Quotes for a v0.7/v0.8 operation, nothing signed: per token, the maximum charge from the version's prefund
 * (maxTokenCostV07) with the token paymaster's gas limits, over the gas the client sent or, when some is missing, the
 * bundler's estimate with that token's stub in. Tokens the chain does not take, or that cannot be quoted now while
 * others can, are listed in unsupportedTokens; when none can be quoted, the first one's reason is the error.
 */
export async function quoteTokensV07(
  ctx: ActionContext,
  request: TokenQuoteRequestV07,
): Promise<{ paymasterAddress: string; feeQuotes: FeeQuote[]; unsupportedTokens: string[] }> {
  const chain = tokenChain(ctx.chain);
  const { tokens, unsupported } = requestedTokens(request.selection, chain);
  const feeQuotes = await quoteEachToken(ctx, tokens, unsupported, async (token) => {
    const terms = await termsOf(ctx, token, request.expirySeconds);
    const tokenRequest = { ...request, feeToken: token.address };
    const complete = hasGas(request.userOp)
      ? request.userOp
      : await estimatedV07(ctx, tokenRequest, stubWithTerms(tokenRequest, terms));
    const gas = asGivenV07(complete, tokenPaymasterGasLimitsV07);
    const { maxTokenCost: _, ...quote } = quoteOfMaximum(
      token,
      terms,
      maxTokenCostV07(gas, terms.exchangeRate, terms.priceMarkup),
    );
    return quote;
  });
  return { paymasterAddress: request.target.paymaster, feeQuotes, unsupportedTokens: unsupported };
}

function hasGas(userOp: PartialUserOperationV07): boolean {
  return [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].every((field) => userOp[field] !== undefined);
}
