// ERC-7677's first step, pm_getPaymasterStubData: what the client puts in the operation while its bundler estimates
// gas, for the version and paymaster kind asked. Our paymaster part of the final length, carrying the terms that will
// be signed, with a signature that recovers to nobody, so the estimate pays for the same calldata. Before it, what
// can be known now says whether the operation can be sponsored at all. Nothing is signed, recorded or reserved.
import type { Address, Hex } from "viem";
import { ENTRY_POINT_VERSIONS } from "../bindings/entryPoints/versions";
import { encodeVerifyingPaymasterDataV07 } from "../bindings/paymasters/paymasterAndDataV07";
import { maxTokenCost, tokenPaymasterGasLimits } from "../bindings/paymasters/token";
import {
  encodeTokenPaymasterData,
  maxTokenCost as maxTokenCostV06,
  type TokenFeeTerms,
} from "../bindings/paymasters/tokenPaymasterAndData";
import { paymasterGasLimitsV07 } from "../bindings/paymasters/verifyingPaymasterGasV07";
import { accountCodeOf } from "../chain/accountCode";
import { CLOCK_SKEW_SECONDS } from "../chain/clockSkew";
import {
  DUMMY_SIGNATURE,
  PLACEHOLDER_PAYMASTER_ID,
  stubPaymasterAndData,
  stubTokenPaymasterAndData,
} from "../gasEstimation/gasEstimationStub";
import type { SmartAccountInfo } from "../sponsorship/callData";
import { cheapestCompletion, checkEligibility } from "../sponsorship/eligibility";
import { failedCheck } from "../sponsorship/engine";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07, SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import { SenderDeployment } from "../sponsorship/senderDeployment";
import { requireBalance } from "../tokens/erc20Terms";
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import type {
  EntryPointV07,
  PaymasterFieldsV07,
  SponsoredKind,
  StepRequest,
  TokenKind,
  VersionedPaymasterPart,
} from "./stepRequest";
import { tokenTermsOf } from "./tokenTerms";

/** A stub, or why the operation can never be sponsored as it stands (nothing was reserved either way). */
export type StubAnswer = { stub: VersionedPaymasterPart } | { refused: string };

/**
 * The stub for the request's version and kind. Either mode: our paymaster failing a check of the contract watch is
 * refused first, naming the check. SPONSORED mode: the rules that spend nothing decide next (stubRefusal). ERC20
 * mode: a sender that cannot pay even the operation at its cheapest (gas not estimated yet counts as zero) is refused
 * now, in the final request's words, rather than after the user signed.
 */
export async function paymasterStub(ctx: ActionContext, request: StepRequest): Promise<StubAnswer> {
  await admitRequest(ctx, request.userOp.sender);
  // A paymaster that fails a check on chain (signer, stake, code…) makes the final request refuse before any rule;
  // the stub refuses in the same words, before any price read or rule, rather than hand out what cannot be signed.
  const paymaster = paymasterOf(ctx, request);
  const failed = paymaster === undefined ? undefined : failedCheck(ctx.deps, ctx.chain, paymaster);
  if (failed) return { refused: failed.reason };
  const { mode } = request;
  if (request.version === "0.6") {
    if (mode.mode === "ERC20") {
      return { stub: { version: "0.6", paymasterAndData: await tokenStubV06(ctx, request.userOp, mode) } };
    }
    return verifyingStubV06(ctx, request.userOp, mode);
  }
  if (mode.mode === "ERC20") {
    return {
      stub: { version: request.version, fields: await tokenStubV07(ctx, request.target, request.userOp, mode) },
    };
  }
  const fields = verifyingStubFieldsV07(ctx, request.target, request.userOp, mode.expirySeconds);
  const refused = await stubRefusal(ctx, { ...request.userOp, ...paymasterLimits(fields) }, mode);
  return refused === undefined ? { stub: { version: request.version, fields } } : { refused };
}

/**
 * Our paymaster the stub names: for v0.6 the chain's own of the kind asked, for later versions the one of the
 * EntryPoint named. Undefined where the chain has none; each stub refuses that in its own words.
 */
function paymasterOf(ctx: ActionContext, request: StepRequest): Address | undefined {
  if (request.version !== "0.6") return request.target.paymaster;
  return request.mode.mode === "ERC20" ? ctx.chain.tokenPaymaster : ctx.chain.verifyingPaymaster;
}

/** v0.6, SPONSORED: our 276-byte paymasterAndData, once the rules that spend nothing find the operation sponsorable. */
async function verifyingStubV06(
  ctx: ActionContext,
  userOp: PartialUserOperation,
  mode: SponsoredKind,
): Promise<StubAnswer> {
  const paymaster = ctx.chain.verifyingPaymaster;
  if (!paymaster) {
    return {
      refused: `no verifying paymaster is configured for chain ${ctx.chain.chainId} (${ctx.chain.name})`,
    };
  }
  const refused = await stubRefusal(ctx, userOp, mode);
  if (refused !== undefined) return { refused };
  const paymasterAndData = stubPaymasterAndData({ paymaster, ...stubTerms(ctx, mode.expirySeconds) });
  return { stub: { version: "0.6", paymasterAndData } };
}

/** v0.6, ERC20: the token paymaster's 278-byte paymasterAndData with today's terms. */
async function tokenStubV06(ctx: ActionContext, userOp: PartialUserOperation, mode: TokenKind): Promise<Hex> {
  const { chain, token, terms } = await tokenTermsOf(ctx, mode);
  const least = maxTokenCostV06(cheapestCompletion(userOp), terms.exchangeRate, terms.priceMarkup);
  await requireBalance(chain, token, userOp.sender, least, ctx.log);
  return stubTokenPaymasterAndData({ ...terms, paymaster: chain.tokenPaymaster });
}

/**
 * v0.7/v0.8, ERC20: the token paymaster, its gas limits, and paymasterData carrying the terms that will be signed
 * (today's price, so a bundler's simulation checks the sender's balance as validation will).
 */
async function tokenStubV07(
  ctx: ActionContext,
  target: EntryPointV07,
  userOp: PartialUserOperationV07,
  mode: TokenKind,
): Promise<PaymasterFieldsV07> {
  const { chain, token, terms } = await tokenTermsOf(ctx, mode);
  const stub = tokenStubFieldsV07(target, userOp, terms);
  const cheapest = cheapestCompletion({ ...userOp, ...paymasterLimits(stub) });
  const least = maxTokenCost(ENTRY_POINT_VERSIONS[target.version], cheapest, terms);
  await requireBalance(chain, token, userOp.sender, least, ctx.log);
  return stub;
}

/**
 * Our verifying paymaster's v0.7/v0.8 fields of the final length: its two gas limits as they will be signed, and
 * paymasterData with the dApp's deposit, the window that will be signed, and a signature that recovers to nobody.
 */
export function verifyingStubFieldsV07(
  ctx: ActionContext,
  target: EntryPointV07,
  userOp: PartialUserOperationV07,
  expirySeconds: number,
): PaymasterFieldsV07 {
  return {
    paymaster: target.paymaster,
    paymasterData: encodeVerifyingPaymasterDataV07({ ...stubTerms(ctx, expirySeconds), signature: DUMMY_SIGNATURE }),
    ...paymasterGasLimitsV07(userOp),
  };
}

/** The token paymaster's v0.7/v0.8 fields of the final length, carrying `terms` and a signature to nobody. */
export function tokenStubFieldsV07(
  target: EntryPointV07,
  userOp: PartialUserOperationV07,
  terms: TokenFeeTerms,
): PaymasterFieldsV07 {
  return {
    paymaster: target.paymaster,
    paymasterData: encodeTokenPaymasterData({ ...terms, signature: DUMMY_SIGNATURE }),
    ...tokenPaymasterGasLimits(userOp),
  };
}

const paymasterLimits = (stub: PaymasterFieldsV07) => ({
  paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit,
});

/**
 * Why the operation can never be sponsored, or undefined when it may be: the rules of `deps.stubRules` (memory-only
 * rules, the deposit read without a hold) over the operation at its cheapest (gas and fees not sent yet count as
 * zero; see cheapestCompletion), at the clock and expiry the final request would use. No webhook is called, no limit
 * or deposit reserved, nothing recorded: the final request runs every rule again over the estimated figures.
 */
async function stubRefusal(
  ctx: ActionContext,
  userOp: SponsoredUserOperation,
  request: { expirySeconds: number; smartAccount?: SmartAccountInfo },
): Promise<string | undefined> {
  const nowMs = ctx.deps.now();
  const eligibility = await checkEligibility(
    {
      setup: ctx.setup,
      userOp: cheapestCompletion(userOp),
      smartAccount: request.smartAccount,
      senderDeployment: new SenderDeployment(userOp, accountCodeOf(ctx.chain), nowMs),
      nowMs,
      validUntil: Math.floor(nowMs / 1000) + request.expirySeconds,
    },
    ctx.deps.stubRules,
  );
  return eligibility.eligible ? undefined : eligibility.reason;
}

/**
 * The terms a stub carries while gas is estimated: the window the engine (sponsorOperation) will sign, to the second
 * or nearly, and the deposit it will name, so that the stub has the final bytes.
 */
export function stubTerms(ctx: ActionContext, expirySeconds: number) {
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  return {
    paymasterId: ctx.setup.fundingAddress ?? PLACEHOLDER_PAYMASTER_ID,
    validUntil: nowSeconds + expirySeconds,
    validAfter: nowSeconds - CLOCK_SKEW_SECONDS,
  };
}
