import type { FastifyInstance } from "fastify";
import {
  changeEventEndpoint,
  createEventEndpoint,
  deliveriesOf,
  type EndpointWithSecret,
  eventEndpointOf,
  eventEndpointsOf,
  removeEventEndpoint,
  replayToEndpoint,
  rotateEventEndpoint,
} from "../actions/eventEndpoints";
import {
  createEventEndpointSchema,
  deleteEventEndpointSchema,
  deliveriesSchema,
  getEventEndpointSchema,
  listEventEndpointsSchema,
  replaySchema,
  rotateSecretSchema,
  updateEventEndpointSchema,
} from "../schemas/management/eventEndpoints";
import type { EventEndpoint } from "../storage/eventEndpoints";
import { webhookSettings } from "../webhooks/settings";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed, urlCheckOf } from "./management";

/** An endpoint as answered: never its secret, sealed or not. */
const endpointView = (endpoint: EventEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  enabled: endpoint.enabled,
  disabledReason: endpoint.disabledReason,
  failingSince: endpoint.failingSinceMs,
  pending: endpoint.pending,
  previousSecretUntil: endpoint.previousSecretUntilMs,
  createdAt: endpoint.createdMs,
});

/** The answers of creation and rotation: the secret, this once. */
const withSecret = (endpoint: EndpointWithSecret) => ({ ...endpointView(endpoint), secret: endpoint.secretText });

/** A paymaster's event endpoints (docs/events.md): where its events are pushed, and what became of each attempt. */
export function eventEndpointRoutes(app: FastifyInstance, { ctx, actions, credentials }: Management): void {
  const api = typed(app);
  const dapp = dappGuard(credentials);
  const checkUrl = urlCheckOf(app, ctx);
  const signingKey = () => webhookSettings(ctx.webhooks).signingKey;

  api.post(
    "/event-endpoints",
    { schema: createEventEndpointSchema, preValidation: dapp.preValidation },
    async (request, reply) => {
      const created = await createEventEndpoint(
        actions,
        dapp.of(request).paymaster,
        request.body,
        checkUrl,
        signingKey(),
      );
      reply.header("cache-control", "no-store");
      return success("Event endpoint created", withSecret(created));
    },
  );

  api.get(
    "/event-endpoints",
    { schema: listEventEndpointsSchema, preValidation: dapp.preValidation },
    async (request) => {
      const endpoints = await eventEndpointsOf(actions, dapp.of(request).paymaster);
      return success("Event endpoints fetched", endpoints.map(endpointView));
    },
  );

  api.get(
    "/event-endpoints/:id",
    { schema: getEventEndpointSchema, preValidation: dapp.preValidation },
    async (request) => {
      const endpoint = await eventEndpointOf(actions, dapp.of(request).paymaster, request.params.id);
      return success("Event endpoint fetched", endpointView(endpoint));
    },
  );

  api.patch(
    "/event-endpoints/:id",
    { schema: updateEventEndpointSchema, preValidation: dapp.preValidation },
    async (request) => {
      const { paymaster } = dapp.of(request);
      const endpoint = await changeEventEndpoint(actions, paymaster, request.params.id, request.body, checkUrl);
      return success("Event endpoint updated", endpointView(endpoint));
    },
  );

  api.delete(
    "/event-endpoints/:id",
    { schema: deleteEventEndpointSchema, preValidation: dapp.preValidation },
    async (request) => {
      await removeEventEndpoint(actions, dapp.of(request).paymaster, request.params.id);
      return success("Event endpoint deleted");
    },
  );

  api.post(
    "/event-endpoints/:id/rotate-secret",
    { schema: rotateSecretSchema, preValidation: dapp.preValidation },
    async (request, reply) => {
      const { paymaster } = dapp.of(request);
      const rotated = await rotateEventEndpoint(actions, paymaster, request.params.id, request.body, signingKey());
      reply.header("cache-control", "no-store");
      return success("Event endpoint secret rotated", withSecret(rotated));
    },
  );

  api.get(
    "/event-endpoints/:id/deliveries",
    { schema: deliveriesSchema, preValidation: dapp.preValidation },
    async (request) => {
      const { paymaster } = dapp.of(request);
      const { items, nextCursor } = await deliveriesOf(actions, paymaster, request.params.id, request.query);
      return {
        ...success(
          "Event deliveries fetched",
          items.map(({ atMs, ...attempt }) => ({ ...attempt, at: atMs })),
        ),
        nextCursor,
      };
    },
  );

  api.post(
    "/event-endpoints/:id/replay",
    { schema: replaySchema, preValidation: dapp.preValidation },
    async (request) => {
      const queued = await replayToEndpoint(actions, dapp.of(request).paymaster, request.params.id, request.body);
      return success("Events queued again", { queued });
    },
  );
}
