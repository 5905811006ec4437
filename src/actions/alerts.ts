import { PaymasterNotFoundError } from "../errors";
import type { SetDepositAlertBody } from "../schemas/management/funding";
import { removeAlertSettings, saveAlertSettings } from "../storage/alerts";
import type { Paymaster } from "../storage/paymasters";
import { callableUrl } from "./httpUrl";
import { isUuid, type ManagementContext, type UrlCheck } from "./managementContext";

/**
 * Sets where the paymaster's alerts go and the deposit threshold (docs/alerts.md), checked like a webhook URL; a null
 * url turns the alerts off. Setting them re-arms deposit.low: the next check alerts if the deposit is already below.
 */
export async function setDepositAlert(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: SetDepositAlertBody,
  checkUrl: UrlCheck,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  if (body.url === null) {
    await removeAlertSettings(ctx.db, paymaster.id);
    ctx.alertsChanged?.(paymaster.id);
    return paymaster;
  }
  const url = await callableUrl(body.url, "url", checkUrl);
  await saveAlertSettings(ctx.db, { paymasterId: paymaster.id, thresholdWei: BigInt(body.thresholdWei), url });
  ctx.alertsChanged?.(paymaster.id);
  return paymaster;
}
