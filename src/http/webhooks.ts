import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { badRequest, messages, notFound } from "../errors";
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  setWebhookActive,
  type Webhook,
} from "../storage/webhooks";
import { accountWebhookSecret, webhookSettings } from "../webhooks/settings";
import { requireAccount, requireDapp } from "./auth";
import { success } from "./envelope";
import { isUuid, jsonObject, oneOf, requiredHttpUrl, requiredString } from "./validate";
import { requireCallableUrl } from "./webhookUrl";

const webhookView = (webhook: Webhook) => ({
  webhookId: webhook.id,
  webhookUrl: webhook.url,
  requestType: webhook.requestType,
  active: webhook.active,
});

const dappAuth = { missingMessage: messages.authTokenAndApiKeyRequired };

/** PATCH and DELETE name their webhook in the body; no body at all is a missing webhookId, as the interface words it. */
const bodyOf = (body: unknown) => jsonObject(body === undefined ? {} : body);

function webhookIdOf(body: Record<string, unknown>): string {
  if (typeof body.webhookId !== "string") throw badRequest(messages.webhookIdMustBeString);
  return body.webhookId;
}

/** Endpoints 15 to 18: the dApp's own webhooks that can veto a sponsorship. */
export function webhookRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post("/webhook", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const body = jsonObject(request.body);
    const url = requiredHttpUrl(body, "webhookUrl");
    const requestType = oneOf(requiredString(body, "requestType"), ["GET", "POST"] as const, "requestType");
    await requireCallableUrl(app, ctx, url, "webhookUrl");
    const webhook = await insertWebhook(ctx.db, { paymasterId: paymaster.id, url, requestType });
    return success("Webhook created", webhookView(webhook));
  });

  // The interface's GET carries a body too; a body on GET is ignored and webhookId comes from the query.
  app.get<{ Querystring: { webhookId?: unknown } }>("/webhook", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, { missingMessage: messages.authTokenRequired });
    const { webhookId } = request.query;
    if (webhookId === undefined) {
      return success("Webhook list fetched", (await listWebhooks(ctx.db, paymaster.id)).map(webhookView));
    }
    const webhook = isUuid(webhookId) ? await findWebhook(ctx.db, paymaster.id, webhookId) : undefined;
    if (!webhook) throw notFound(messages.webhookNotFound);
    return success("Webhook list fetched", [webhookView(webhook)]);
  });

  app.patch("/webhook", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const body = bodyOf(request.body);
    const webhookId = webhookIdOf(body);
    if (typeof body.active !== "boolean") throw badRequest(messages.activeMustBeBoolean);
    if (!isUuid(webhookId) || !(await setWebhookActive(ctx.db, paymaster.id, webhookId, body.active))) {
      throw notFound(messages.webhookNotFound);
    }
    return success("Webhook updated");
  });

  // An extension: the account's key of the signature every webhook request carries (x-paymaster-signature).
  app.get("/webhook-secret", async (request, reply) => {
    const account = await requireAccount(ctx.db, request, messages.authTokenRequired);
    reply.header("cache-control", "no-store");
    return success("Webhook secret fetched", {
      webhookSecret: accountWebhookSecret(webhookSettings(ctx.webhooks), account.id),
    });
  });

  app.delete("/webhook", async (request) => {
    const { paymaster } = await requireDapp(ctx.db, request, dappAuth);
    const webhookId = webhookIdOf(bodyOf(request.body));
    if (!isUuid(webhookId) || !(await deleteWebhook(ctx.db, paymaster.id, webhookId))) {
      throw notFound(messages.webhookNotFound);
    }
    return success("Webhook deleted");
  });
}
