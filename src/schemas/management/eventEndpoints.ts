import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { Uuid } from "../primitives";
import {
  BadRequest,
  HttpUrl,
  NotFound,
  Success,
  Text,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withProblem,
} from "./common";
import { PagedSuccess, PageQuery } from "./paging";

/** A paymaster's event endpoints (docs/events.md): what happens to its operations, pushed as Standard Webhooks. */

/** Every event an endpoint can subscribe to. */
const EVENT_TYPES = [
  "sponsorship.signed",
  "sponsorship.included",
  "sponsorship.reverted",
  "sponsorship.expired",
  "deposit.low",
  "limit.reached",
] as const;

/** Endpoints one paymaster may have: each is a queue delivery works through. */
export const MAX_EVENT_ENDPOINTS = 10;
/** Events one replay may queue again. */
export const MAX_REPLAY_EVENTS = 10_000;
/** The longest grace period of a rotation: both secrets sign for at most a week. */
const MAX_GRACE_SECONDS = 7 * 24 * 60 * 60;

const Events = withProblem(
  Type.Array(Type.String({ enum: [...EVENT_TYPES] }), {
    minItems: 1,
    maxItems: 20,
    description: "The events sent to the endpoint (one named twice counts once)",
    examples: [["sponsorship.signed", "sponsorship.included"]],
  }),
  {
    type: `must be a list of events, each one of ${EVENT_TYPES.join(", ")}`,
    enum: `must be a list of events, each one of ${EVENT_TYPES.join(", ")}`,
    minItems: "must name at least one event",
    maxItems: "must name at most 20 events",
  },
);

const Description = Text(500, { description: "A note of the dApp's own" });

export const CreateEventEndpointBody = Type.Object({
  url: HttpUrl,
  events: Events,
  description: Type.Optional(Description),
});
export type CreateEventEndpointBody = Static<typeof CreateEventEndpointBody>;

export const UpdateEventEndpointBody = Type.Object({
  url: Type.Optional(HttpUrl),
  events: Type.Optional(Events),
  description: Type.Optional(Type.Union([Description, Type.Null()])),
  enabled: Type.Optional(withProblem(Type.Boolean(), "must be true or false")),
});
export type UpdateEventEndpointBody = Static<typeof UpdateEventEndpointBody>;

export const RotateSecretBody = Type.Object({
  graceSeconds: withProblem(
    Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_SECONDS,
      description: "How long the replaced secret keeps signing beside the new one; 0: it stops at once",
      examples: [86_400],
    }),
    `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`,
  ),
});
export type RotateSecretBody = Static<typeof RotateSecretBody>;

const Millis = (description: string) =>
  withProblem(
    Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description, examples: [1767225600000] }),
    "must be a time in milliseconds since the epoch: a whole number",
  );

export const ReplayBody = Type.Object({
  from: Type.Optional(Millis("Events from this instant (included), ms since the epoch; with `to`")),
  to: Type.Optional(Millis("Events before this instant (excluded), ms since the epoch; with `from`")),
  eventId: Type.Optional(
    withProblem(
      Type.String({
        pattern: "^evt_[0-9a-f]{32}$",
        description: "Instead of a range: the one event to send again (its id, as the deliveries list shows it)",
        examples: ["evt_5b1d0c8e2f8a4f0e9a1b2c3d4e5f6a7b"],
      }),
      "must be an event's id: evt_ and 32 hex digits",
    ),
  ),
});
export type ReplayBody = Static<typeof ReplayBody>;

const EndpointParams = Type.Object({
  id: Type.String({ description: "The endpoint's id (UUID); any other id is not found" }),
});

export const DeliveriesQuery = Type.Object({ ...PageQuery.properties });
export type DeliveriesQuery = Static<typeof DeliveriesQuery>;

const Nullable = (schema: ReturnType<typeof Type.String>, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const EndpointView = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.Enum([...EVENT_TYPES])),
  description: Nullable(Type.String(), "The dApp's note; null when none"),
  enabled: Type.Boolean(),
  disabledReason: Nullable(
    Type.String(),
    "Why the service turned the endpoint off (it failed for a day); null when enabled or turned off by the dApp",
  ),
  failingSince: Type.Union([Type.Integer(), Type.Null()], {
    description: "Since when its deliveries have been failing (ms); null while they succeed",
  }),
  pending: Type.Integer({ minimum: 0, description: "Deliveries not yet made" }),
  previousSecretUntil: Type.Union([Type.Integer(), Type.Null()], {
    description: "Until when (ms) the secret a rotation replaced still signs beside the new one; null when none",
  }),
  createdAt: Type.Integer({ description: "ms since the epoch" }),
});

const WithSecret = Type.Object({
  ...EndpointView.properties,
  secret: Type.String({
    description: "The signing secret (whsec_…): shown in this answer only, stored sealed",
    examples: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"],
  }),
});

const AttemptView = Type.Object({
  eventId: Type.String({ description: "The event's id, the webhook-id header" }),
  type: Type.Enum([...EVENT_TYPES]),
  sequence: Type.Integer({ description: "The event's number in this endpoint's order" }),
  attempt: Type.Integer({ description: "1 for the first attempt at this delivery" }),
  delivered: Type.Boolean(),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: "The answer's status; null when none came" }),
  error: Nullable(Type.String(), "Why the attempt failed; null when delivered"),
  durationMs: Type.Integer(),
  at: Type.Integer({ description: "When the attempt was made, ms since the epoch" }),
});

const unauthorized = Unauthorized(messages.authTokenAndApiKeyRequired);
const notFound = NotFound(messages.eventEndpointNotFound);
const Forbidden = Type.Object(
  { statusCode: Type.Literal(403), message: Type.String({ examples: [messages.readScope] }) },
  { description: "The token has the read scope" },
);
const common = { tags: ["events"], security: tokenAndApiKey };

export const createEventEndpointSchema = {
  ...common,
  summary: "Add an event endpoint; its signing secret is in this answer only",
  body: CreateEventEndpointBody,
  response: {
    200: Success("Event endpoint created", WithSecret),
    400: BadRequest(
      "url resolves to 10.0.0.5, a private address",
      `events must be a list of events, each one of ${EVENT_TYPES.join(", ")}`,
      `A paymaster has at most ${MAX_EVENT_ENDPOINTS} event endpoints`,
    ),
    401: unauthorized,
    403: Forbidden,
    429: TooManyRequests,
  },
};

export const listEventEndpointsSchema = {
  ...common,
  summary: "The paymaster's event endpoints (never their secrets)",
  response: {
    200: Success("Event endpoints fetched", Type.Array(EndpointView)),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const getEventEndpointSchema = {
  ...common,
  summary: "One event endpoint (never its secret)",
  params: EndpointParams,
  response: {
    200: Success("Event endpoint fetched", EndpointView),
    401: unauthorized,
    404: notFound,
    429: TooManyRequests,
  },
};

export const updateEventEndpointSchema = {
  ...common,
  summary: "Change an endpoint's url or events, or turn it on or off (on again: its queue resumes in order)",
  params: EndpointParams,
  body: UpdateEventEndpointBody,
  response: {
    200: Success("Event endpoint updated", EndpointView),
    400: BadRequest("url resolves to 10.0.0.5, a private address", "enabled must be true or false"),
    401: unauthorized,
    403: Forbidden,
    404: notFound,
    429: TooManyRequests,
  },
};

export const deleteEventEndpointSchema = {
  ...common,
  summary: "Remove an endpoint with its queue",
  params: EndpointParams,
  response: {
    200: Success("Event endpoint deleted"),
    401: unauthorized,
    403: Forbidden,
    404: notFound,
    429: TooManyRequests,
  },
};

export const rotateSecretSchema = {
  ...common,
  summary: "Replace the signing secret; the old one keeps signing beside it for graceSeconds",
  params: EndpointParams,
  body: RotateSecretBody,
  response: {
    200: Success("Event endpoint secret rotated", WithSecret),
    400: BadRequest(`graceSeconds must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`),
    401: unauthorized,
    403: Forbidden,
    404: notFound,
    429: TooManyRequests,
  },
};

export const deliveriesSchema = {
  ...common,
  summary: "The endpoint's delivery attempts, newest first, a page at a time",
  params: EndpointParams,
  querystring: DeliveriesQuery,
  response: {
    200: Type.Object({
      ...PagedSuccess("Event deliveries fetched", AttemptView).properties,
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: "The cursor of the next page, null after the last",
      }),
    }),
    400: BadRequest("cursor must be the nextCursor of a previous page of this list"),
    401: unauthorized,
    404: notFound,
    429: TooManyRequests,
  },
};

export const replaySchema = {
  ...common,
  summary: "Send again, after what is queued, one event or the events of a time range the endpoint subscribes to",
  params: EndpointParams,
  body: ReplayBody,
  response: {
    200: Success("Events queued again", Type.Object({ queued: Type.Integer({ minimum: 0 }) })),
    400: BadRequest(
      "from must be a time in milliseconds since the epoch: a whole number",
      "from must not be after to",
      "from and to are required, or eventId",
      "eventId names no event of this paymaster",
      `The range holds more than ${MAX_REPLAY_EVENTS} events: replay a shorter one`,
    ),
    401: unauthorized,
    403: Forbidden,
    404: notFound,
    429: TooManyRequests,
  },
};
