// pm_sponsorUserOperation (and ERC-7677's pm_getPaymasterData through sponsorAsSent): the operation's gas, then the
// engine's decision and signature (src/sponsorship/engine.ts) for the request's EntryPoint version and paymaster kind.
// A refusal by rule is an answer with its reason; how it is told to the client is the caller's business. ERC20 mode
// has no refusal by rule: its one check (the sender's balance) throws the error the client gets.

import type { Hex } from "viem";
import type { SignableUserOperation } from "../bindings/entryPoints/v06";
import type { LaterEntryPointVersion } from "../bindings/entryPoints/versions";
import { tokenPaymaster, tokenPaymasterGasLimits } from "../bindings/paymasters/token";
import { verifyingPaymaster } from "../bindings/paymasters/verifying";
import { type TokenBalanceCheck, tokenBalanceRule } from "../sponsorship/rules/tokenBalance";
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import { asGiven, withEstimatedGas } from "./operationGas";
import { asGivenV07, estimatedV07, type WithGasV07 } from "./operationGasV07";
import { type SponsorAnswer, type SponsorAnswerV07, signedOrThrow, signV06, signV07 } from "./signOperation";
import type { StepRequest } from "./stepRequest";
import { tokenStubFieldsV07, verifyingStubFieldsV07 } from "./stub";
import { withTokenGas } from "./tokenGas";
import { tokenTermsOf } from "./tokenTerms";

export interface SponsorshipV06 {
  version: "0.6";
  /** The decision: paymasterAndData signed, or `0x` and the reason. */
  answer: SponsorAnswer;
  /** The operation the answer covers, gas filled in. */
  userOp: SignableUserOperation;
  /** The service chose the fees (they were missing): the signature covers them, so the client must use them. */
  feesChosen: boolean;
}

export interface SponsorshipV07 {
  version: LaterEntryPointVersion;
  /** Our paymaster fields, signed (`0x` paymasterData and the reason when refused), and the account's gas. */
  answer: SponsorAnswerV07;
}

type V06Request = StepRequest & { version: "0.6" };
type V07Request = StepRequest & { version: LaterEntryPointVersion };

/**
 * The gas first: v0.6's estimated when calculateGasLimits is true (so a spending limit reserves over the values that
 * are signed), a later version's from the chain's bundler when one is configured (our stub paymaster fields in, so the
 * estimate pays for them; what the client sent is a lower bound), else as sent. Then the decision and the signature.
 */
export function sponsor(ctx: ActionContext, request: V06Request): Promise<SponsorshipV06>;
export function sponsor(ctx: ActionContext, request: V07Request): Promise<SponsorshipV07>;
export async function sponsor(ctx: ActionContext, request: StepRequest): Promise<SponsorshipV06 | SponsorshipV07> {
  await admitRequest(ctx, request.userOp.sender);
  return request.version === "0.6" ? sponsorV06(ctx, request, true) : sponsorV07(ctx, request, true);
}

/** The same decision over the gas exactly as the client sent it (ERC-7677's second step): every value must be there. */
export async function sponsorAsSent(
  ctx: ActionContext,
  request: StepRequest,
): Promise<SponsorshipV06 | SponsorshipV07> {
  await admitRequest(ctx, request.userOp.sender);
  return request.version === "0.6" ? sponsorV06(ctx, request, false) : sponsorV07(ctx, request, false);
}

async function sponsorV06(ctx: ActionContext, request: V06Request, estimate: boolean): Promise<SponsorshipV06> {
  const { mode } = request;
  const calculateGasLimits = estimate && mode.calculateGasLimits === true;
  const signature: Hex = request.signature ?? "0x";
  if (mode.mode === "ERC20") {
    const { chain, token, terms } = await tokenTermsOf(ctx, mode);
    const { userOp, feesChosen, l1DataGas } = await withTokenGas(
      request.userOp,
      signature,
      calculateGasLimits,
      ctx,
      chain,
      terms,
      "sign",
    );
    const kind = tokenKind({ chain, token, terms, log: ctx.log });
    const answer = signedOrThrow(await signV06(ctx, kind, chain.tokenPaymaster, userOp, { ...mode, l1DataGas }));
    return { version: "0.6", answer, userOp, feesChosen };
  }
  const { userOp, feesChosen, l1DataGas } = calculateGasLimits
    ? await withEstimatedGas(ctx, { ...mode, userOp: request.userOp, signature })
    : { userOp: asGiven(request.userOp), feesChosen: false, l1DataGas: undefined };
  const answer = await signV06(ctx, verifyingPaymaster, ctx.chain.verifyingPaymaster, userOp, { ...mode, l1DataGas });
  return { version: "0.6", answer, userOp, feesChosen };
}

async function sponsorV07(ctx: ActionContext, request: V07Request, estimate: boolean): Promise<SponsorshipV07> {
  const { mode, target } = request;
  if (mode.mode === "ERC20") {
    const { chain, token, terms } = await tokenTermsOf(ctx, mode);
    const withGas: WithGasV07 = estimate
      ? await estimatedV07(ctx, { ...request, ...mode }, tokenStubFieldsV07(target, request.userOp, terms))
      : { userOp: request.userOp };
    const kind = tokenKind({ chain, token, terms, log: ctx.log });
    const userOp = asGivenV07(withGas.userOp, tokenPaymasterGasLimits);
    const signed = await signV07(ctx, target, kind, userOp, { ...mode, l1DataGas: withGas.l1DataGas });
    return { version: request.version, answer: signedOrThrow(signed) };
  }
  const withGas: WithGasV07 = estimate
    ? await estimatedV07(
        ctx,
        { ...request, ...mode },
        verifyingStubFieldsV07(ctx, target, request.userOp, mode.expirySeconds),
      )
    : { userOp: request.userOp };
  const answer = await signV07(ctx, target, verifyingPaymaster, asGivenV07(withGas.userOp), {
    ...mode,
    l1DataGas: withGas.l1DataGas,
  });
  return { version: request.version, answer };
}

/** The token paymaster for one request's token and terms, deciding by ERC20 mode's one rule: the sender's balance. */
function tokenKind(check: TokenBalanceCheck) {
  return tokenPaymaster({
    terms: check.terms,
    balanceRule: (sender, maximum) => tokenBalanceRule(check, sender, maximum),
  });
}
