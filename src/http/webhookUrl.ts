import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { badRequest } from "../errors";
import { guardOf, registrationRefusal, webhookSettings } from "../webhooks/settings";

/**
 * Refuses at registration a webhook URL the service would refuse to call: one resolving to a blocked range (private,
 * loopback, link-local unless configured; multicast, reserved and the like always) or to this service itself. The
 * message names the field: "webhookUrl resolves to 10.0.0.5, a private address".
 */
export async function requireCallableUrl(app: FastifyInstance, ctx: AppContext, url: string, field: string) {
  const settings = webhookSettings(ctx.webhooks);
  const refusal = await registrationRefusal(
    url,
    guardOf(settings, () => app.addresses()),
    settings,
  );
  if (refusal) throw badRequest(`${field} ${refusal}`);
}
