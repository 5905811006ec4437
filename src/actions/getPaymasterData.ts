import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import { type SponsorAnswer, sponsor } from "../sponsorship/sponsor";
import type { ActionContext } from "./context";
import { asGiven } from "./sponsorUserOperation";

export interface PaymasterDataRequest {
  userOp: PartialUserOperation;
  expirySeconds: number;
  smartAccount?: { name: string; version: string };
  webhookData?: Record<string, unknown>;
}

/**
 * ERC-7677's second step: the operation arrives with its estimated gas, and every rule of SPONSORED mode decides over
 * exactly those values, as for pm_sponsorUserOperation. A refusal is an answer with its reason.
 */
export async function getPaymasterData(ctx: ActionContext, request: PaymasterDataRequest): Promise<SponsorAnswer> {
  const answer = await sponsor(ctx.deps, {
    setup: ctx.setup,
    chain: ctx.chain,
    userOp: asGiven(request.userOp),
    expirySeconds: request.expirySeconds,
    smartAccount: request.smartAccount,
    webhookData: request.webhookData,
  });
  ctx.decision.refusedBy = answer.refusedBy;
  return answer;
}
