// pm_sponsorUserOperation (and ERC-7677's pm_getPaymasterData through sponsorAsSent): the operation's gas, then the
// engine's decision and signature (src/sponsorship/engine.ts), for the request's EntryPoint version and paymaster
// kind, which the request carries (stepRequest.ts): this step asks them and compares neither. A refusal by rule is an
// answer with its reason; how it is told to the client is the caller's business. A kind whose refusals are errors
// (ERC20 mode) throws them.
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import type { FilledOperation, StepAnswer, StepRequest } from "./stepRequest";

export interface Sponsorship {
  /** The decision in the version's shape: our part signed, or `0x` and the reason. */
  answer: StepAnswer;
  /** The operation the answer covers, gas filled in. */
  userOp: FilledOperation["userOp"];
  /** The service chose the fees (they were missing): the signature covers them, so the client must use them. */
  feesChosen: boolean;
}

/**
 * The gas first, as the operation's version fills it (estimated where the version and the client ask for it, with our
 * stub in so the estimate pays for it; what the client sent is a lower bound), then the decision and the signature.
 */
export function sponsor(ctx: ActionContext, request: StepRequest): Promise<Sponsorship> {
  return sponsorWith(ctx, request, true);
}

/** The same decision over the gas exactly as the client sent it (ERC-7677's second step): every value must be there. */
export function sponsorAsSent(ctx: ActionContext, request: StepRequest): Promise<Sponsorship> {
  return sponsorWith(ctx, request, false);
}

async function sponsorWith(ctx: ActionContext, request: StepRequest, estimate: boolean): Promise<Sponsorship> {
  const { operation, kind: choice } = request;
  await admitRequest(ctx, operation.sender);
  const kind = await choice.choose(ctx);
  const filled = await operation.fill(ctx, kind, { estimate, purpose: "sign", choice });
  const answer = await filled.sign(ctx, choice);
  return { answer, userOp: filled.userOp, feesChosen: filled.feesChosen };
}
