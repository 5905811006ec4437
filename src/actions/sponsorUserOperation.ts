import type { Hex } from "viem";
import { invalidParams } from "../errors";
import { canEstimateGas } from "../gasEstimation/gasEstimation";
import { PLACEHOLDER_PAYMASTER_ID } from "../gasEstimation/gasEstimationStub";
import { CLOCK_SKEW_SECONDS } from "../sponsorship/decideSignRecord";
import { paymasterAndDataV06, type SignableUserOperation } from "../sponsorship/entryPoints/v06";
import { ENTRY_POINT_VERSIONS } from "../sponsorship/entryPoints/versions";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../sponsorship/partialUserOperation";
import { verifyingPaymaster } from "../sponsorship/paymasters/verifying";
import type { ActionContext } from "./context";
import { observedGasEstimate } from "./observedGasEstimation";
import { type SignedAnswer, signOperation } from "./signOperation";

/** A v0.6 decision: paymasterAndData signed (`0x` when refused) over the gas it carries. */
export type SponsorAnswer = Omit<SignedAnswer, "paymaster" | "paymasterData"> & { paymasterAndData: Hex };

/** A SPONSORED-mode request, as read from any of the methods' params. */
export interface SponsorRequest {
  userOp: PartialUserOperation;
  /** The account's signature as sent: read only to size the estimate's stand-in. */
  signature: Hex;
  calculateGasLimits: boolean;
  expirySeconds: number;
  smartAccount?: { name: string; version: string };
  webhookData?: Record<string, unknown>;
}

export interface SponsorOutcome {
  /** The decision: paymasterAndData signed, or `0x` and the reason. */
  answer: SponsorAnswer;
  /** The operation the answer covers, gas filled in. */
  userOp: SignableUserOperation;
  /** The service chose the fees (they were missing): the signature covers them, so the client must use them. */
  feesChosen: boolean;
}

/**
 * Sponsors an operation in SPONSORED mode: its gas as sent, or estimated first when calculateGasLimits is true (so a
 * spending limit reserves over the values that are signed), then the rules and the signature (src/sponsorship/engine.ts).
 * A refusal is an answer with its reason; how it is told to the client is the caller's business.
 */
export async function sponsorUserOperation(ctx: ActionContext, request: SponsorRequest): Promise<SponsorOutcome> {
  const { userOp, feesChosen } = request.calculateGasLimits
    ? await withEstimatedGas(ctx, request)
    : { userOp: asGiven(request.userOp), feesChosen: false };
  return { answer: await sponsorV06(ctx, { ...request, userOp }), userOp, feesChosen };
}

/** v0.6 in SPONSORED mode: the chain's verifying paymaster signs what the rules allow. */
export async function sponsorV06(
  ctx: ActionContext,
  request: Pick<SponsorRequest, "expirySeconds" | "smartAccount" | "webhookData"> & { userOp: SignableUserOperation },
): Promise<SponsorAnswer> {
  const { paymaster, paymasterData, ...answer } = await signOperation(ctx, {
    version: ENTRY_POINT_VERSIONS["0.6"],
    entryPoint: ctx.chain.entryPoint,
    kind: verifyingPaymaster,
    paymaster: ctx.chain.verifyingPaymaster,
    userOp: request.userOp,
    expirySeconds: request.expirySeconds,
    smartAccount: request.smartAccount,
    webhookData: request.webhookData,
  });
  return { ...answer, paymasterAndData: paymaster ? paymasterAndDataV06({ paymaster, paymasterData }) : "0x" };
}

/**
 * The terms a stub paymasterAndData carries while gas is estimated: the window the engine (sponsorOperation) will
 * sign, to the second or nearly, and the deposit it will name, so that the stub has the final bytes.
 */
export function stubTerms(ctx: ActionContext, expirySeconds: number) {
  const nowSeconds = Math.floor((ctx.deps.now ?? Date.now)() / 1000);
  return {
    paymasterId: ctx.setup.fundingAddress ?? PLACEHOLDER_PAYMASTER_ID,
    validUntil: nowSeconds + expirySeconds,
    validAfter: nowSeconds - CLOCK_SKEW_SECONDS,
  };
}

/** `calculateGasLimits` false: the signature covers the gas values the client sent, so all must be there. */
export function asGiven(userOp: PartialUserOperation): SignableUserOperation {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(
      `params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits, so send them or set ` +
        "calculateGasLimits to true",
    );
  }
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  return userOp as SignableUserOperation;
}

/**
 * `calculateGasLimits` true: the three limits are estimated (src/gasEstimation/gasEstimation.ts). A limit the client sent is a
 * lower bound: the estimate raises a limit that is too low and keeps one that is higher. Missing fees are chosen by
 * the chain.
 */
async function withEstimatedGas(
  ctx: ActionContext,
  request: SponsorRequest,
): Promise<{ userOp: SignableUserOperation; feesChosen: boolean }> {
  const { userOp } = request;
  const missing = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].filter((field) => userOp[field] === undefined);
  const { chain } = ctx;
  if (!canEstimateGas(chain)) {
    // Nothing to estimate for: sign over what was sent, as without calculateGasLimits.
    if (missing.length === 0) return { userOp: userOp as SignableUserOperation, feesChosen: false };
    const why = chain.verifyingPaymaster ? "it has no RPC or bundler configured" : "it has no verifying paymaster";
    throw invalidParams(
      `Chain ${chain.chainId} (${chain.name}) cannot estimate gas: ${why}; send the gas limits and fees ` +
        `(missing: ${missing.join(", ")})`,
    );
  }
  const started = performance.now();
  const estimate = await observedGasEstimate(ctx, {
    chain,
    userOp,
    signature: request.signature,
    // The window the engine (sponsorOperation) will sign, to the second or nearly: the stub has the final bytes.
    terms: stubTerms(ctx, request.expirySeconds),
  });
  ctx.log.debug(
    { chainId: chain.chainId, source: estimate.source, ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  const { source: _, ...values } = estimate;
  return {
    userOp: { ...userOp, ...values },
    feesChosen: userOp.maxFeePerGas === undefined || userOp.maxPriorityFeePerGas === undefined,
  };
}
