// The engine (src/sponsorship/engine.ts) as the steps call it: the request's setup and chain, the decision noted for
// the metrics, and the answer in the version's shape (v0.6: paymasterAndData; later: the fields apart).
import type { Address, Hex } from "viem";
import type { SigningWindow } from "../bindings/paymasters/paymasterKind";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import { type ParallelSignature, type SponsorshipRequest, sponsorOperation } from "../sponsorship/engine";
import type { SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import type { StepAnswer } from "./stepRequest";

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

/**
 * The engine's decision for the operation, answered in its version's shape (EntryPointVersion.answerPart). A kind
 * whose refusal is an error (PaymasterKind.refusalIsError) throws it here.
 */
export async function signAndAnswer<Op extends Signable, Terms extends SigningWindow>(
  ctx: ActionContext,
  request: Omit<SponsorshipRequest<Op, Terms>, "setup" | "chain">,
): Promise<StepAnswer> {
  const { paymaster, paymasterData, ...rest } = await signOperation(ctx, request);
  const part = request.version.answerPart(
    request.paymaster,
    paymaster ? { paymaster, paymasterData } : undefined,
    request.userOp,
  );
  const answer = { ...rest, part };
  return request.kind.refusalIsError ? signedOrThrow(answer) : answer;
}

/**
 * ERC20 mode's answer, which has no `0x` form for a refusal: its rules throw their own errors, but a refusal before
 * the rules (a failed check of the token paymaster on chain, a block window that cannot be read) is recorded with its
 * reason and told to the client as -32003 with that reason, never as a failure of the service.
 */
function signedOrThrow<Answer extends { reason?: string }>(answer: Answer): Answer {
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  return answer;
}
