// ERC-7677's second step, pm_getPaymasterData: the operation arrives with the gas its bundler estimated over our stub,
// and the engine decides and signs over exactly those values (src/actions/sponsor.ts, sponsorAsSent), for the
// request's EntryPoint version and paymaster kind. A refusal is an answer with its reason.
import type { ActionContext } from "./context";
import { type Sponsorship, sponsorAsSent } from "./sponsor";
import type { StepRequest } from "./stepRequest";

export function paymasterData(ctx: ActionContext, request: StepRequest): Promise<Sponsorship> {
  return sponsorAsSent(ctx, request);
}
