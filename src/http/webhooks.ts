import type { FastifyInstance } from "fastify";
import { createWebhook, removeWebhook, setWebhookActive, webhooksOf } from "../actions/webhooks";
import { AuthTokenRequiredError } from "../errors";
import {
  createWebhookSchema,
  listWebhooksSchema,
  removeWebhookSchema,
  setWebhookActiveSchema,
  webhookSecretSchema,
} from "../schemas/management/webhooks";
import type { Webhook } from "../storage/webhooks";
import { accountWebhookSecret, webhookSettings } from "../webhooks/settings";
import { accountGuard, dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, noBodyIsEmpty, typed, urlCheckOf } from "./management";

const webhookView = (webhook: Webhook) => ({
  webhookId: webhook.id,
  webhookUrl: webhook.url,
  requestType: webhook.requestType,
  active: webhook.active,
});

/** Endpoints 15 to 18 and the webhook secret: the dApp's own webhooks that can veto a sponsorship. */
export function webhookRoutes(app: FastifyInstance, { ctx, actions, credentials }: Management): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);
  // The interface words the GET's 401 as for a token alone.
  const dappForList = dappGuard(credentials, { missing: AuthTokenRequiredError });
  const account = accountGuard(credentials);
  const checkUrl = urlCheckOf(app, ctx);

  api.post("/webhook", { schema: createWebhookSchema, preValidation: dapp.preValidation }, async (request) => {
    const webhook = await createWebhook(actions, dapp.of(request).paymaster, request.body, checkUrl);
    return success("Webhook created", webhookView(webhook));
  });

  // The interface's GET carries a body too; a body on GET is ignored and webhookId comes from the query.
  api.get("/webhook", { schema: listWebhooksSchema, preValidation: dappForList.preValidation }, async (request) => {
    const webhooks = await webhooksOf(actions, dappForList.of(request).paymaster, request.query.webhookId);
    return success("Webhook list fetched", webhooks.map(webhookView));
  });

  api.patch(
    "/webhook",
    { schema: setWebhookActiveSchema, preValidation: [dapp.preValidation, noBodyIsEmpty] },
    async (request) => {
      await setWebhookActive(actions, dapp.of(request).paymaster, request.body);
      return success("Webhook updated");
    },
  );

  // An extension: the account's key of the signature every webhook request carries (x-paymaster-signature).
  api.get(
    "/webhook-secret",
    { schema: webhookSecretSchema, preValidation: account.preValidation },
    async (request, reply) => {
      reply.header("cache-control", "no-store");
      return success("Webhook secret fetched", {
        webhookSecret: accountWebhookSecret(webhookSettings(ctx.webhooks), account.of(request).id),
      });
    },
  );

  api.delete(
    "/webhook",
    { schema: removeWebhookSchema, preValidation: [dapp.preValidation, noBodyIsEmpty] },
    async (request) => {
      await removeWebhook(actions, dapp.of(request).paymaster, request.body);
      return success("Webhook deleted");
    },
  );
}
