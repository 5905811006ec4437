// The engine (src/sponsorship/engine.ts) as the steps call it: the request's paymaster and chain, the decision noted
// for the metrics, and the answer in each version's shape (v0.6: paymasterAndData; later: the fields apart).
import type { Address, Hex } from "viem";
import { paymasterAndDataV06, type SignableUserOperation } from "../bindings/entryPoints/v06";
import type { SignableUserOperationV07 } from "../bindings/entryPoints/v07";
import { ENTRY_POINT_VERSIONS } from "../bindings/entryPoints/versions";
import type { PaymasterKind, SigningWindow } from "../bindings/paymasters/paymasterKind";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import { type ParallelSignature, type SponsorshipRequest, sponsorOperation } from "../sponsorship/engine";
import type { SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import type { EntryPointV07, PaymasterFieldsV07, SponsoredKind } from "./stepRequest";

type Signable = SponsorshipRequest<
  SponsoredUserOperation & {
    callGasLimit: bigint;
    verificationGasLimit: bigint;
    preVerificationGas: bigint;
    maxFeePerGas: bigint;
    maxPriorityFeePerGas: bigint;
  },
  SigningWindow
>["userOp"];

/** The account's gas the answer covers, as signed. */
export interface AccountGas {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
}

/** A decision and the gas it covers: signed paymaster data, or a refusal with its reason (and the refusing rule). */
export type SignedAnswer = AccountGas & {
  paymaster?: Address;
  /** `0x` when refused. */
  paymasterData: Hex;
  reason?: string;
  /** When refused: the rule that refused (a fixed name, for metrics and logs), or "noVerifyingPaymaster". */
  refusedBy?: string;
  /** Parallel signing (v0.9): the paymaster signature apart from paymasterData and the user operation hash it signs. */
  parallel?: ParallelSignature;
};

/** A v0.6 decision: paymasterAndData signed (`0x` when refused) over the gas it carries. */
export type SponsorAnswer = Omit<SignedAnswer, "paymaster" | "paymasterData"> & { paymasterAndData: Hex };

/** A v0.7/v0.8 decision: our paymaster fields, signed (`0x` paymasterData when refused), and the account's gas. */
export type SponsorAnswerV07 = PaymasterFieldsV07 & Omit<SignedAnswer, "paymaster" | "paymasterData">;

/** What a signature's record carries besides the operation: the window asked for, and SPONSORED mode's extras. */
type SigningOptions = Pick<SponsoredKind, "expirySeconds" | "smartAccount" | "webhookData"> & {
  parallel?: boolean;
  /** The L1 data fee's part of preVerificationGas where the service estimated the gas. */
  l1DataGas?: bigint;
};

/** Signs through the engine for the request's paymaster and chain; notes the refusing rule for the decision metrics. */
async function signOperation<Op extends Signable, Terms extends SigningWindow>(
  ctx: ActionContext,
  request: Omit<SponsorshipRequest<Op, Terms>, "setup" | "chain">,
): Promise<SignedAnswer> {
  const { userOp } = request;
  const gas = {
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
  };
  const outcome = await sponsorOperation(ctx.deps, { ...request, setup: ctx.setup, chain: ctx.chain });
  if (outcome.sponsored) {
    if (request.l1DataGas !== undefined && request.l1DataGas > 0n) {
      ctx.metrics?.l1DataGas.observe({ chain_id: String(ctx.chain.chainId) }, Number(request.l1DataGas));
    }
    return {
      paymaster: outcome.paymaster,
      paymasterData: outcome.paymasterData,
      ...gas,
      ...(outcome.parallel ? { parallel: outcome.parallel } : {}),
    };
  }
  ctx.decision.refusedBy = outcome.refusedBy;
  return {
    paymasterData: "0x",
    ...gas,
    reason: outcome.reason,
    ...(outcome.refusedBy ? { refusedBy: outcome.refusedBy } : {}),
  };
}

/** A v0.6 operation, signed by our paymaster of `kind` at `paymaster` for the chain's own EntryPoint. */
export async function signV06<Terms extends SigningWindow>(
  ctx: ActionContext,
  kind: PaymasterKind<Terms>,
  paymaster: Address | undefined,
  userOp: SignableUserOperation,
  options: SigningOptions,
): Promise<SponsorAnswer> {
  const {
    paymaster: signer,
    paymasterData,
    ...answer
  } = await signOperation(ctx, {
    version: ENTRY_POINT_VERSIONS["0.6"],
    entryPoint: ctx.chain.entryPoint,
    kind,
    paymaster,
    userOp,
    expirySeconds: options.expirySeconds,
    smartAccount: options.smartAccount,
    webhookData: options.webhookData,
    ...(options.l1DataGas === undefined ? {} : { l1DataGas: options.l1DataGas }),
  });
  return { ...answer, paymasterAndData: signer ? paymasterAndDataV06({ paymaster: signer, paymasterData }) : "0x" };
}

/** A v0.7/v0.8 operation, signed by our paymaster of `kind` for the EntryPoint it named, answered as our fields. */
export async function signV07<Terms extends SigningWindow>(
  ctx: ActionContext,
  target: EntryPointV07,
  kind: PaymasterKind<Terms>,
  userOp: SignableUserOperationV07,
  options: SigningOptions,
): Promise<SponsorAnswerV07> {
  const answer = await signOperation(ctx, {
    version: ENTRY_POINT_VERSIONS[target.version],
    entryPoint: target.entryPoint,
    kind,
    paymaster: target.paymaster,
    userOp,
    expirySeconds: options.expirySeconds,
    smartAccount: options.smartAccount,
    webhookData: options.webhookData,
    ...(options.parallel ? { parallel: true } : {}),
    ...(options.l1DataGas === undefined ? {} : { l1DataGas: options.l1DataGas }),
  });
  return {
    ...answer,
    paymaster: target.paymaster,
    paymasterVerificationGasLimit: userOp.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: userOp.paymasterPostOpGasLimit,
  };
}

/**
 * ERC20 mode's answer, which has no `0x` form for a refusal: its rules throw their own errors, but a refusal before
 * the rules (a failed check of the token paymaster on chain, a block window that cannot be read) is recorded with its
 * reason and told to the client as -32003 with that reason, never as a failure of the service.
 */
export function signedOrThrow<Answer extends { reason?: string }>(answer: Answer): Answer {
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  return answer;
}
