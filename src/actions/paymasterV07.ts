// SPONSORED mode for EntryPoint v0.7 and v0.8 operations: ERC-7677's stub and signed paymaster fields, and
// pm_sponsorUserOperation's answer with the account's gas as well. The rules and the record are sponsorV07's.
import type { Address, Hex } from "viem";
import { invalidParams } from "../errors";
import { estimateWithBundlerV07 } from "../gasEstimation/gasEstimationBundlerV07";
import { DUMMY_SIGNATURE } from "../gasEstimation/gasEstimationStub";
import type { SignableUserOperationV07 } from "../sponsorship/entryPoints/v07";
import { ENTRY_POINT_VERSIONS, type LaterEntryPointVersion } from "../sponsorship/entryPoints/versions";
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import {
  encodeVerifyingPaymasterDataV07,
  type PaymasterGasLimits,
} from "../sponsorship/paymasters/paymasterAndDataV07";
import type { PaymasterKind, SigningWindow } from "../sponsorship/paymasters/paymasterKind";
import { verifyingPaymaster } from "../sponsorship/paymasters/verifying";
import { paymasterGasLimitsV07 } from "../sponsorship/paymasters/verifyingPaymasterGasV07";
import type { ActionContext } from "./context";
import { type StubAnswer, stubRefusal } from "./getPaymasterStubData";
import { type PaymasterFieldsV07, type SignedAnswer, signOperation } from "./signOperation";
import { stubTerms } from "./sponsorUserOperation";

export type { PaymasterFieldsV07 };

/** A v0.7/v0.8 decision: our paymaster fields, signed (`0x` paymasterData when refused), and the account's gas. */
export type SponsorAnswerV07 = PaymasterFieldsV07 & Omit<SignedAnswer, "paymaster" | "paymasterData">;

/** The EntryPoint a request named and our verifying paymaster for it. */
export interface EntryPointV07 {
  version: LaterEntryPointVersion;
  entryPoint: Address;
  paymaster: Address;
}

export interface PaymasterRequestV07 {
  target: EntryPointV07;
  userOp: PartialUserOperationV07;
  /** The account's signature as sent: sizes the bundler's estimate. */
  signature?: Hex;
  expirySeconds: number;
  smartAccount?: { name: string; version: string };
  webhookData?: Record<string, unknown>;
}

/**
 * ERC-7677's first step for v0.7/v0.8: our paymaster, its two gas limits as they will be signed, and paymasterData of
 * the final length (the dApp's deposit, the window sponsor will sign, a signature that recovers to nobody).
 */
function paymasterStubFieldsV07(
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

/**
 * pm_getPaymasterStubData for v0.7/v0.8 in SPONSORED mode: the stub fields, once the rules that spend nothing find the
 * operation sponsorable (stubRefusal), its paymaster gas limits those the final request will sign.
 */
export async function paymasterStubV07(
  ctx: ActionContext,
  request: Pick<PaymasterRequestV07, "target" | "userOp" | "expirySeconds" | "smartAccount">,
): Promise<StubAnswer<PaymasterFieldsV07>> {
  const stub = paymasterStubFieldsV07(ctx, request.target, request.userOp, request.expirySeconds);
  const refused = await stubRefusal(ctx, { ...request.userOp, ...paymasterLimits(stub) }, request);
  return refused === undefined ? { stub } : { refused };
}

const paymasterLimits = (stub: PaymasterFieldsV07): PaymasterGasLimits => ({
  paymasterVerificationGasLimit: stub.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: stub.paymasterPostOpGasLimit,
});

/** ERC-7677's second step: the operation arrives with its estimated gas; the rules decide over exactly those values. */
export async function getPaymasterDataV07(ctx: ActionContext, request: PaymasterRequestV07): Promise<SponsorAnswerV07> {
  return decideV07(ctx, request, asGivenV07(request.userOp), verifyingPaymaster);
}

/**
 * pm_sponsorUserOperation for v0.7/v0.8: the account's gas from the chain's bundler when one is configured (our stub
 * paymaster fields in, so the estimate pays for them; what the client sent is a lower bound), else as the client sent
 * it. Our own simulation of v0.7 operations does not exist yet, so without a bundler the gas must be sent.
 */
export async function sponsorUserOperationV07(
  ctx: ActionContext,
  request: PaymasterRequestV07,
): Promise<SponsorAnswerV07> {
  const stub = paymasterStubFieldsV07(ctx, request.target, request.userOp, request.expirySeconds);
  return decideV07(ctx, request, asGivenV07(await estimatedV07(ctx, request, stub)), verifyingPaymaster);
}

/**
 * The operation with the account's gas from the chain's bundler (with `stub`, our paymaster fields of the final length,
 * in it, so the estimate pays for them; what the client sent is a lower bound). Without a bundler configured the gas
 * must have been sent, and the operation is returned as it came.
 */
export async function estimatedV07(
  ctx: ActionContext,
  request: Pick<PaymasterRequestV07, "target" | "userOp" | "signature">,
  stub: PaymasterFieldsV07,
): Promise<PartialUserOperationV07> {
  const { chain } = ctx;
  if (!chain.bundlerUrl) {
    const missing = GAS_LIMIT_FIELDS.filter((field) => request.userOp[field] === undefined);
    if (missing.length > 0) {
      throw invalidParams(
        `params[0] is missing ${missing.join(", ")}: chain ${chain.chainId} (${chain.name}) has no bundler ` +
          "configured (bundlerUrl) to estimate the gas of EntryPoint v0.7 and v0.8 operations, so send the gas limits",
      );
    }
    return request.userOp;
  }
  const userOp = requireFees(request.userOp);
  const started = performance.now();
  const estimate = await estimateWithBundlerV07(chain.bundlerUrl, request.target.entryPoint, {
    ...userOp,
    callGasLimit: userOp.callGasLimit ?? 0n,
    verificationGasLimit: userOp.verificationGasLimit ?? 0n,
    preVerificationGas: userOp.preVerificationGas ?? 0n,
    ...stub,
    signature: request.signature && request.signature !== "0x" ? request.signature : DUMMY_SIGNATURE,
  });
  ctx.log.debug(
    { chainId: chain.chainId, source: "bundler", ms: Math.round(performance.now() - started) },
    "gas estimated",
  );
  const atLeast = (given: bigint | undefined, estimated: bigint) =>
    given !== undefined && given > estimated ? given : estimated;
  return {
    ...userOp,
    callGasLimit: atLeast(userOp.callGasLimit, estimate.callGasLimit),
    verificationGasLimit: atLeast(userOp.verificationGasLimit, estimate.verificationGasLimit),
    preVerificationGas: atLeast(userOp.preVerificationGas, estimate.preVerificationGas),
    paymasterVerificationGasLimit: atLeast(
      userOp.paymasterVerificationGasLimit,
      estimate.paymasterVerificationGasLimit ?? 0n,
    ),
  };
}

/** The engine for the request's EntryPoint and our paymaster of `kind` for it, answered as paymaster fields. */
export async function decideV07<Terms extends SigningWindow>(
  ctx: ActionContext,
  request: Pick<PaymasterRequestV07, "target" | "expirySeconds" | "smartAccount" | "webhookData">,
  userOp: SignableUserOperationV07,
  kind: PaymasterKind<Terms>,
): Promise<SponsorAnswerV07> {
  const { target } = request;
  const answer = await signOperation(ctx, {
    version: ENTRY_POINT_VERSIONS[target.version],
    entryPoint: target.entryPoint,
    kind,
    paymaster: target.paymaster,
    userOp,
    expirySeconds: request.expirySeconds,
    smartAccount: request.smartAccount,
    webhookData: request.webhookData,
  });
  return {
    ...answer,
    paymaster: target.paymaster,
    paymasterVerificationGasLimit: userOp.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.paymasterPostOpGasLimit,
  };
}

type WithFees = PartialUserOperationV07 & { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };

function requireFees(userOp: PartialUserOperationV07): WithFees {
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  return userOp as WithFees;
}

/**
 * The signature covers the gas values and fees, so all must be there; the paymaster's limits are ours to set (the
 * verifying paymaster's unless `limits` gives another paymaster's).
 */
export function asGivenV07(
  userOp: PartialUserOperationV07,
  limits: (given: PartialUserOperationV07) => PaymasterGasLimits = paymasterGasLimitsV07,
): SignableUserOperationV07 {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(`params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits`);
  }
  requireFees(userOp);
  return { ...userOp, ...limits(userOp) } as SignableUserOperationV07;
}
