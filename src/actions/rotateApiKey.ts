import { PaymasterNotFoundError } from "../errors";
import type { RotateApiKeyBody } from "../schemas/management/funding";
import { type Paymaster, rotatePaymasterApiKey } from "../storage/paymasters";
import { isUuid, type ManagementContext } from "./managementContext";

/**
 * Gives the paymaster a new apiKey; the replaced one keeps working for `graceSeconds` (0: it stops at once), so that a
 * dApp can roll out the new key without an outage. This instance forgets both keys' cached setups now; other instances
 * when the database notifies the change (their caches also compare the grace's end with the clock on every hit).
 */
export async function rotateApiKey(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: RotateApiKeyBody,
): Promise<{ paymaster: Paymaster; previousApiKeyValidUntil: string | null }> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const untilMs = body.graceSeconds > 0 ? ctx.now() + body.graceSeconds * 1000 : null;
  const rotated = await rotatePaymasterApiKey(ctx.db, paymaster.id, untilMs);
  if (!rotated) throw new PaymasterNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  ctx.setupChanged(rotated.apiKey);
  return {
    paymaster: rotated,
    previousApiKeyValidUntil: untilMs === null ? null : new Date(untilMs).toISOString(),
  };
}
