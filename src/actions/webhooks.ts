import { WebhookNotFoundError } from "../errors";
import type { CreateWebhookBody, RemoveWebhookBody, SetWebhookActiveBody } from "../schemas/management/webhooks";
import type { Paymaster } from "../storage/paymasters";
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  setWebhookActive as storeWebhookActive,
  type Webhook,
} from "../storage/webhooks";
import { callableUrl } from "./httpUrl";
import { isUuid, type ManagementContext, type UrlCheck } from "./managementContext";

/** A webhook that is asked before each sponsorship; refused when the service would refuse to call its URL. */
export async function createWebhook(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: CreateWebhookBody,
  checkUrl: UrlCheck,
): Promise<Webhook> {
  const url = await callableUrl(body.webhookUrl, "webhookUrl", checkUrl);
  const webhook = await insertWebhook(ctx.db, { paymasterId: paymaster.id, url, requestType: body.requestType });
  ctx.setupChanged(paymaster.apiKey);
  return webhook;
}

/** Every webhook of the paymaster, or the one named. */
export async function webhooksOf(ctx: ManagementContext, paymaster: Paymaster, webhookId?: string): Promise<Webhook[]> {
  if (webhookId === undefined) return listWebhooks(ctx.db, paymaster.id);
  const webhook = isUuid(webhookId) ? await findWebhook(ctx.db, paymaster.id, webhookId) : undefined;
  if (!webhook) throw new WebhookNotFoundError();
  return [webhook];
}

export async function setWebhookActive(ctx: ManagementContext, paymaster: Paymaster, body: SetWebhookActiveBody) {
  if (!isUuid(body.webhookId) || !(await storeWebhookActive(ctx.db, paymaster.id, body.webhookId, body.active))) {
    throw new WebhookNotFoundError();
  }
  ctx.setupChanged(paymaster.apiKey);
}

export async function removeWebhook(ctx: ManagementContext, paymaster: Paymaster, body: RemoveWebhookBody) {
  if (!isUuid(body.webhookId) || !(await deleteWebhook(ctx.db, paymaster.id, body.webhookId))) {
    throw new WebhookNotFoundError();
  }
  ctx.setupChanged(paymaster.apiKey);
}
