import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { ActionContext } from "./context";
import { asGiven, type SponsorAnswer, sponsorV06 } from "./sponsorUserOperation";

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
  return sponsorV06(ctx, { ...request, userOp: asGiven(request.userOp) });
}
