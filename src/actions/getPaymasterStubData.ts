import type { Hex } from "viem";
import { stubPaymasterAndData } from "../gasEstimation/gasEstimationStub";
import type { SmartAccountInfo } from "../sponsorship/callData";
import { cheapestCompletion, checkEligibility } from "../sponsorship/eligibility";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import { stubTerms } from "./sponsorUserOperation";

export interface StubRequest {
  userOp: PartialUserOperation;
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
}

/** A stub, or why the operation can never be sponsored as it stands (nothing was reserved either way). */
export type StubAnswer<Stub> = { stub: Stub } | { refused: string };

/**
 * ERC-7677's first step: what the client puts in the operation while its bundler estimates gas. It is our 276-byte
 * paymasterAndData with a signature that recovers to nobody, byte for byte the length of the final one, so the
 * estimate pays for the same calldata. Before it, the rules that spend nothing say whether the operation can be
 * sponsored at all (stubRefusal). Nothing is signed, recorded or reserved.
 */
export async function getPaymasterStubData(ctx: ActionContext, request: StubRequest): Promise<StubAnswer<Hex>> {
  const paymaster = ctx.chain.verifyingPaymaster;
  if (!paymaster) {
    return {
      refused: `no verifying paymaster is configured for chain ${ctx.chain.chainId} (${ctx.chain.name})`,
    };
  }
  const refused = await stubRefusal(ctx, request.userOp, request);
  if (refused !== undefined) return { refused };
  return { stub: stubPaymasterAndData({ paymaster, ...stubTerms(ctx, request.expirySeconds) }) };
}

/**
 * Why the operation can never be sponsored, or undefined when it may be: the rules of `deps.stubRules` (memory-only
 * rules, the deposit read without a hold) over the operation at its cheapest (gas and fees not sent yet count as
 * zero; see cheapestCompletion), at the clock and expiry the final request would use. No webhook is called, no limit
 * or deposit reserved, nothing recorded: the final request runs every rule again over the estimated figures.
 */
export async function stubRefusal(
  ctx: ActionContext,
  userOp: SponsoredUserOperation,
  request: { expirySeconds: number; smartAccount?: SmartAccountInfo },
): Promise<string | undefined> {
  const nowMs = (ctx.deps.now ?? Date.now)();
  const eligibility = await checkEligibility(
    {
      setup: ctx.setup,
      userOp: cheapestCompletion(userOp),
      smartAccount: request.smartAccount,
      nowMs,
      validUntil: Math.floor(nowMs / 1000) + request.expirySeconds,
    },
    ctx.deps.stubRules,
  );
  return eligibility.eligible ? undefined : eligibility.reason;
}
