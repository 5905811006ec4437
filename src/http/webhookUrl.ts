import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { badRequest } from "../errors";
import { guardOf, registrationCheck, webhookSettings } from "../webhooks/settings";

/**
 * Refuses at registration a webhook URL the service would refuse to call: one resolving to a blocked range (private,
 * loopback, link-local unless configured; multicast, reserved and the like always), to this service itself, or a name
 * DNS says does not exist. The message names the field: "webhookUrl resolves to 10.0.0.5, a private address". When DNS
 * cannot tell, the URL is accepted and a warning logged (host only: a URL may carry a secret of the dApp's).
 */
export async function requireCallableUrl(app: FastifyInstance, ctx: AppContext, url: string, field: string) {
  const settings = webhookSettings(ctx.webhooks);
  const checked = await registrationCheck(
    url,
    guardOf(settings, () => app.addresses()),
    settings,
  );
  if ("refusal" in checked) throw badRequest(`${field} ${checked.refusal}`);
  if ("warning" in checked) app.log.warn({ field }, checked.warning);
}
