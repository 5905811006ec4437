import { badRequest, PaymasterNotFoundError } from "../errors";
import type { SetSponsorInfoBody } from "../schemas/management/funding";
import { type Paymaster, setSponsorInfo as storeSponsorInfo } from "../storage/paymasters";
import { isUuid, type ManagementContext } from "./managementContext";
import { sponsorIcon } from "./sponsorIcon";

/**
 * Sets the sponsor ERC-7677's stub gives wallets (`sponsor: {name, icon}`), or removes it with a null name. The icon is
 * checked before anything is written; the RPC endpoint sees the change at once (the setup cache is told).
 */
export async function setSponsorInfo(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: SetSponsorInfoBody,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const icon = body.icon === undefined || body.icon === null ? undefined : sponsorIcon(body.icon, "icon");
  if (body.name === null && icon !== undefined) {
    throw badRequest("icon is given with a null name: a sponsor's icon needs its name (ERC-7677 sponsor.name)");
  }
  const sponsor = body.name === null ? null : { name: body.name.trim(), ...(icon ? { icon } : {}) };
  const updated = await storeSponsorInfo(ctx.db, paymaster.id, sponsor);
  if (!updated) throw new PaymasterNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return updated;
}
