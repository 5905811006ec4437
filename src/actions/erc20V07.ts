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
import type { SignableUserOperationV07 } from "../sponsorship/entryPoints/v07";
import { ENTRY_POINT_VERSIONS } from "../sponsorship/entryPoints/versions";
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import { maxTokenCost, tokenPaymaster, tokenPaymasterGasLimits } from "../sponsorship/paymasters/token";
import type { TokenFeeTerms } from "../sponsorship/paymasters/tokenPaymasterAndData";
import { encodeTokenPaymasterData } from "../sponsorship/paymasters/tokenPaymasterAndData";
import { feeToken, requestedTokens, requireBalance, termsNow, tokenChain } from "../tokens/erc20Terms";
import { quoteOfMaximum } from "../tokens/quote";
import type { ActionContext } from "./context";
import {
  asGivenV07,
  decideV07,
  type EntryPointV07,
  estimatedV07,
  type PaymasterFieldsV07,
  type SponsorAnswerV07,
} from "./paymasterV07";
import { quoteEachToken } from "./quoteEachToken";

export interface TokenRequestV07 {
  /** The EntryPoint and, as its paymaster, our TokenPaymasterV07 for it. */
  target: EntryPointV07;
  userOp: PartialUserOperationV07;
  /** The account's signature as sent: sizes the bundler's estimate. */
  signature?: Hex;
  expirySeconds: number;
  /** The fee token's address as the client sent it (ERC-7677 context `token`), and where. */
  feeToken: string;
  feeTokenLabel: string;
}

async function termsOf(ctx: ActionContext, token: TokenConfig, expirySeconds: number): Promise<TokenFeeTerms> {
  const chain = tokenChain(ctx.chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  return termsNow(chain, token, nowMs, expirySeconds);
}

/** The chain's fee token the request names; refused with the tokens the chain accepts. */
function requestedToken(ctx: ActionContext, request: TokenRequestV07): TokenConfig {
  return feeToken(request.feeToken, tokenChain(ctx.chain), request.feeTokenLabel);
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
  const least = maxTokenCost(ENTRY_POINT_VERSIONS[request.target.version], cheapest, terms);
  await requireBalance(tokenChain(ctx.chain), token, request.userOp.sender, least, ctx.log);
  return stub;
}

function stubWithTerms(request: TokenRequestV07, terms: TokenFeeTerms): PaymasterFieldsV07 {
  return {
    paymaster: request.target.paymaster,
    paymasterData: encodeTokenPaymasterData({ ...terms, signature: DUMMY_SIGNATURE }),
    ...tokenPaymasterGasLimits(request.userOp),
  };
}

/** ERC-7677's second step: the operation arrives with its gas; signed over exactly those values. */
export async function tokenPaymasterDataV07(ctx: ActionContext, request: TokenRequestV07): Promise<SponsorAnswerV07> {
  const token = requestedToken(ctx, request);
  const terms = await termsOf(ctx, token, request.expirySeconds);
  return signV07(ctx, request, token, terms, asGivenV07(request.userOp, tokenPaymasterGasLimits));
}

/** pm_sponsorUserOperation: the account's gas from the chain's bundler (with the token stub in), then signed. */
export async function sponsorTokenV07(ctx: ActionContext, request: TokenRequestV07): Promise<SponsorAnswerV07> {
  const token = requestedToken(ctx, request);
  const terms = await termsOf(ctx, token, request.expirySeconds);
  const withGas = await estimatedV07(ctx, request, stubWithTerms(request, terms));
  return signV07(ctx, request, token, terms, asGivenV07(withGas, tokenPaymasterGasLimits));
}

async function signV07(
  ctx: ActionContext,
  request: TokenRequestV07,
  token: TokenConfig,
  terms: TokenFeeTerms,
  userOp: SignableUserOperationV07,
): Promise<SponsorAnswerV07> {
  const kind = tokenPaymaster({ chain: tokenChain(ctx.chain), token, terms, log: ctx.log });
  const answer = await decideV07(ctx, request, userOp, kind);
  // The sender must hold the operation's maximum charge, or the check throws: ERC20 mode has no refusal by rule.
  if (answer.reason !== undefined) throw new Error(`ERC20 mode signature not recorded: ${answer.reason}`);
  return answer;
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
    const tokenRequest = { ...request, feeToken: token.address, feeTokenLabel: "" };
    const complete = hasGas(request.userOp)
      ? request.userOp
      : await estimatedV07(ctx, tokenRequest, stubWithTerms(tokenRequest, terms));
    const gas = asGivenV07(complete, tokenPaymasterGasLimits);
    const { maxTokenCost: _, ...quote } = quoteOfMaximum(
      token,
      terms,
      maxTokenCost(ENTRY_POINT_VERSIONS[request.target.version], gas, terms),
    );
    return quote;
  });
  return { paymasterAddress: request.target.paymaster, feeQuotes, unsupportedTokens: unsupported };
}

function hasGas(userOp: PartialUserOperationV07): boolean {
  return [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].every((field) => userOp[field] !== undefined);
}
