import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { Uuid } from "../primitives";
import {
  BadRequest,
  HttpUrl,
  NotFound,
  Success,
  TooManyRequests,
  tokenAndApiKey,
  tokenOnly,
  Unauthorized,
  withMessage,
} from "./common";

/** Endpoints 15 to 18 and the webhook secret: the dApp's own webhooks that can veto a sponsorship. */

const WebhookId = withMessage(
  Type.String({ description: "The webhook's id (UUID); any other id is not found" }),
  messages.webhookIdMustBeString,
);

const WebhookView = Type.Object({
  webhookId: Uuid,
  webhookUrl: Type.String(),
  requestType: Type.Enum(["GET", "POST"]),
  active: Type.Boolean(),
});

export const CreateWebhookBody = Type.Object({
  webhookUrl: HttpUrl,
  requestType: Type.Enum(["GET", "POST"], { type: "string", description: "How the service calls the webhook" }),
});
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

const WebhookQuery = Type.Object({ webhookId: Type.Optional(WebhookId) });

export const SetWebhookActiveBody = Type.Object({
  webhookId: WebhookId,
  active: withMessage(Type.Boolean(), messages.activeMustBeBoolean),
});
export type SetWebhookActiveBody = Static<typeof SetWebhookActiveBody>;

export const RemoveWebhookBody = Type.Object({ webhookId: WebhookId });
export type RemoveWebhookBody = Static<typeof RemoveWebhookBody>;

const unauthorized = Unauthorized(messages.authTokenAndApiKeyRequired);
const common = { tags: ["webhooks"], security: tokenAndApiKey };

export const createWebhookSchema = {
  ...common,
  summary: "Add a webhook that is asked before every sponsorship",
  body: CreateWebhookBody,
  response: {
    200: Success("Webhook created", WebhookView),
    400: BadRequest(
      "webhookUrl must be an http or https URL",
      "webhookUrl resolves to 10.0.0.5, a private address",
      "requestType must be one of GET, POST",
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const listWebhooksSchema = {
  ...common,
  summary: "List the webhooks, or show one (?webhookId=)",
  querystring: WebhookQuery,
  response: {
    200: Success("Webhook list fetched", Type.Array(WebhookView)),
    400: BadRequest(messages.webhookIdMustBeString),
    401: Unauthorized(messages.authTokenRequired),
    404: NotFound(messages.webhookNotFound),
    429: TooManyRequests,
  },
};

export const setWebhookActiveSchema = {
  ...common,
  summary: "Turn a webhook on or off",
  body: SetWebhookActiveBody,
  response: {
    200: Success("Webhook updated"),
    400: BadRequest(messages.webhookIdMustBeString, messages.activeMustBeBoolean),
    401: unauthorized,
    404: NotFound(messages.webhookNotFound),
    429: TooManyRequests,
  },
};

export const removeWebhookSchema = {
  ...common,
  summary: "Remove a webhook",
  body: RemoveWebhookBody,
  response: {
    200: Success("Webhook deleted"),
    400: BadRequest(messages.webhookIdMustBeString),
    401: unauthorized,
    404: NotFound(messages.webhookNotFound),
    429: TooManyRequests,
  },
};

export const webhookSecretSchema = {
  tags: ["webhooks"],
  security: tokenOnly,
  summary: "The account's key of the x-paymaster-signature every webhook request carries",
  response: {
    200: Success(
      "Webhook secret fetched",
      Type.Object({ webhookSecret: Type.String({ description: "Hex key of the HMAC signature" }) }),
    ),
    401: Unauthorized(messages.authTokenRequired),
    429: TooManyRequests,
  },
};
