// The ERC-7677 stub of any version: the engine's check (checkOperation) of the operation at its cheapest, then the
// version's stub part when it passes.
import type { EntryPointVersion, PaymasterAnswerPart } from "../../bindings/entryPoints/entryPointVersion";
import { cheapestCompletion } from "../../sponsorship/eligibility";
import { checkOperation } from "../../sponsorship/engine";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { ActionContext } from "../context";
import type { AnyPaymasterKind, KindChoice, StubOutcome, Target } from "../stepRequest";

export async function stubOutcome<Op extends SponsoredUserOperation>(
  ctx: ActionContext,
  request: { version: EntryPointVersion<Op>; target: Target; kind: AnyPaymasterKind; choice: KindChoice; userOp: Op },
  part: () => PaymasterAnswerPart,
): Promise<StubOutcome> {
  const { version, target, kind, choice } = request;
  const eligibility = await checkOperation(ctx.deps, {
    setup: ctx.setup,
    chain: ctx.chain,
    version,
    kind,
    paymaster: kind.paymaster ?? target.paymaster,
    userOp: cheapestCompletion(request.userOp),
    expirySeconds: choice.expirySeconds,
    smartAccount: choice.smartAccount,
  });
  return eligibility.eligible ? { part: part(), eligibility } : { refused: eligibility.reason };
}
