import { badRequest, PaymasterNotFoundError } from "../errors";
import type { SetAllowedOriginsBody } from "../schemas/management/funding";
import { type Paymaster, setAllowedOrigins as storeAllowedOrigins } from "../storage/paymasters";
import { isUuid, type ManagementContext } from "./managementContext";

/**
 * An origin as a browser sends it in the Origin header (URL's serialisation: scheme and host in lower case, the
 * scheme's default port left out, no trailing slash), so that a listed origin compares equal to the header.
 */
function originOf(text: string, label: string): string {
  let origin: string;
  try {
    origin = new URL(text).origin;
  } catch {
    origin = "null";
  }
  // URL gives "null" for schemes without an origin (file:, data:, …): no browser sends one a paymaster could list.
  if (origin === "null") throw badRequest(`${label} must be a web origin like https://app.example.com, got "${text}"`);
  return origin;
}

/**
 * Sets the origins browsers may call the paymaster's RPC URL from, whole (an empty list: any origin), and, when given,
 * whether calls without an Origin are refused. The RPC endpoint sees it at once here, within a second elsewhere.
 */
export async function setAllowedOrigins(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: SetAllowedOriginsBody,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const origins = [...new Set(body.origins.map((origin, i) => originOf(origin, `origins[${i}]`)))];
  const updated = await storeAllowedOrigins(ctx.db, paymaster.id, origins, body.requireOrigin);
  if (!updated) throw new PaymasterNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return updated;
}
