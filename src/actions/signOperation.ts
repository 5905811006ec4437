// The engine (src/sponsorship/engine.ts) as the use cases call it: the request's paymaster and chain, the decision
// noted for the metrics, and the answer in each version's shape (v0.6: paymasterAndData; later: the fields apart).
import type { Address, Hex } from "viem";
import { type SponsorshipRequest, sponsorOperation } from "../sponsorship/engine";
import type { SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../sponsorship/paymasters/paymasterAndDataV07";
import type { SigningWindow } from "../sponsorship/paymasters/paymasterKind";
import type { ActionContext } from "./context";

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

/** Our paymaster's fields of a v0.7/v0.8 operation, as ERC-7677 and Pimlico answer them. */
export interface PaymasterFieldsV07 extends PaymasterGasLimits {
  paymaster: Address;
  /** Our part of paymasterAndData (ERC-7677's paymasterData); `0x` when refused. */
  paymasterData: Hex;
}

/** A decision and the gas it covers: signed paymaster data, or a refusal with its reason (and the refusing rule). */
export type SignedAnswer = AccountGas & {
  paymaster?: Address;
  /** `0x` when refused. */
  paymasterData: Hex;
  reason?: string;
  /** When refused: the rule that refused (a fixed name, for metrics and logs), or "noVerifyingPaymaster". */
  refusedBy?: string;
};

/** Signs through the engine for the request's paymaster and chain; notes the refusing rule for the decision metrics. */
export async function signOperation<Op extends Signable, Terms extends SigningWindow>(
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
  if (outcome.sponsored) return { paymaster: outcome.paymaster, paymasterData: outcome.paymasterData, ...gas };
  ctx.decision.refusedBy = outcome.refusedBy;
  return {
    paymasterData: "0x",
    ...gas,
    reason: outcome.reason,
    ...(outcome.refusedBy ? { refusedBy: outcome.refusedBy } : {}),
  };
}

/** A signature that must be given (ERC20 mode has no refusal by rule): the answer, or an error if none was recorded. */
export function signedOrThrow(answer: SignedAnswer): SignedAnswer & { paymaster: Address } {
  if (answer.paymaster === undefined) throw new Error(`ERC20 mode signature not recorded: ${answer.reason}`);
  return answer as SignedAnswer & { paymaster: Address };
}
