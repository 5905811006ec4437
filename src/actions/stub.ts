// ERC-7677's first step, pm_getPaymasterStubData: what the client puts in the operation while its bundler estimates
// gas, for the version and paymaster kind asked. Our paymaster part of the final length, carrying the terms that will
// be signed, with a signature that recovers to nobody, so the estimate pays for the same calldata. Before it, the
// engine's check (checkOperation) says whether the operation can be sponsored at all: our paymaster's contract
// checks, then the kind's stub rules over the operation at its cheapest (SPONSORED mode: the rules that spend nothing;
// ERC20 mode: the sender's balance, refused in the final request's words). Nothing is signed, recorded or reserved.
import { failedCheck } from "../sponsorship/engine";
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import type { PaymasterAnswerPart, StepRequest } from "./stepRequest";

/** A stub, or why the operation can never be sponsored as it stands (nothing was reserved either way). */
export type StubAnswer =
  | { stub: PaymasterAnswerPart; extras?: Readonly<Record<string, unknown>> }
  | { refused: string };

export async function paymasterStub(ctx: ActionContext, request: StepRequest): Promise<StubAnswer> {
  const { operation, kind: choice } = request;
  await admitRequest(ctx, operation.sender);
  // A paymaster failing a check on chain (signer, stake, code…) is refused before its terms are made (a token's
  // price read), in the words the final request would use.
  const paymaster = operation.target.paymaster;
  const failed = paymaster === undefined ? undefined : failedCheck(ctx.deps, ctx.chain, paymaster);
  if (failed) return { refused: failed.reason };
  const kind = await choice.choose(ctx);
  const outcome = await operation.stub(ctx, kind, choice);
  if ("refused" in outcome) return outcome;
  // A kind may add to the answer what the wallet needs before it signs (the up-front token paymaster's Permit).
  return kind.stubExtras ? { stub: outcome.part, extras: kind.stubExtras } : { stub: outcome.part };
}
