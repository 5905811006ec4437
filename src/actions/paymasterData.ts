// ERC-7677's second step, pm_getPaymasterData: the operation arrives with the gas its bundler estimated over our stub,
// and the engine decides and signs over exactly those values (src/actions/sponsor.ts, sponsorAsSent), for the
// request's EntryPoint version and paymaster kind. A refusal is an answer with its reason.
import { invalidParams } from "../errors";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { ActionContext } from "./context";
import { type SponsorshipV06, type SponsorshipV07, sponsorAsSent } from "./sponsor";
import type { StepRequest } from "./stepRequest";
import { TOKEN_POSTOP_MIN_VERIFICATION_GAS } from "./tokenGas";

export async function paymasterData(
  ctx: ActionContext,
  request: StepRequest,
): Promise<SponsorshipV06 | SponsorshipV07> {
  if (request.version === "0.6" && request.mode.mode === "ERC20") requirePostOpGasV06(request.userOp);
  return sponsorAsSent(ctx, request);
}

/**
 * EntryPoint v0.6 gives the token paymaster's postOp the operation's verificationGasLimit, and a bundler estimating
 * over our stub does not know postOp's need, so a limit below what the token charge needs is refused rather than
 * signed for an operation whose charge would fail.
 */
function requirePostOpGasV06(userOp: PartialUserOperation): void {
  const limit = userOp.verificationGasLimit;
  if (limit !== undefined && limit < TOKEN_POSTOP_MIN_VERIFICATION_GAS) {
    throw invalidParams(
      `params[0].verificationGasLimit ${limit} is below ${TOKEN_POSTOP_MIN_VERIFICATION_GAS}: EntryPoint v0.6 gives ` +
        "the token paymaster's postOp this limit, and its token charge needs at least that",
    );
  }
}
