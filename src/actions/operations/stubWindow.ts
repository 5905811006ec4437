import { CLOCK_SKEW_SECONDS } from "../../chain/clockSkew";
import type { ActionContext } from "../context";

/**
 * The window a stub's terms carry while gas is estimated: the one the engine (sponsorOperation) will sign, to the
 * second or nearly, so that the stub has the final bytes.
 */
export function stubWindow(ctx: ActionContext, expirySeconds: number) {
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  return { validUntil: nowSeconds + expirySeconds, validAfter: nowSeconds - CLOCK_SKEW_SECONDS };
}
