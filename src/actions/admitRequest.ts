// The RATE_LIMIT quotas, run by every RPC step as its first work (after its params are read, before any gas estimate,
// price read, database write or signature), so that a flood over quota costs the service almost nothing.
import { QuotaExceededError } from "../errors";
import { overQuota } from "../sponsorship/rules/rateLimit";
import type { ActionContext } from "./context";

/** Counts the request against the paymaster's quotas; over one, throws the 429 that names it. */
export async function admitRequest(ctx: ActionContext, sender: string): Promise<void> {
  const nowMs = ctx.deps.now();
  const refusal = await overQuota(ctx.setup, { ...ctx.client, sender }, nowMs, ctx.quotas);
  if (!refusal) return;
  ctx.decision.mode ??= "unknown";
  ctx.decision.refusedBy = "rateLimit";
  throw new QuotaExceededError(refusal.message, refusal.retryAfterSeconds);
}
