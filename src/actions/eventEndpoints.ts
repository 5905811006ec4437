import { randomUUID } from "node:crypto";
import type { Secret } from "../config";
import { badRequest, EventEndpointNotFoundError } from "../errors";
import { sealSecret } from "../events/sealedSecret";
import { newEndpointSecret } from "../events/standardSignature";
import {
  type CreateEventEndpointBody,
  type DeliveriesQuery,
  MAX_EVENT_ENDPOINTS,
  MAX_REPLAY_EVENTS,
  type ReplayBody,
  type RotateSecretBody,
  type UpdateEventEndpointBody,
} from "../schemas/management/eventEndpoints";
import {
  countEventEndpoints,
  deleteEventEndpoint,
  type EventEndpoint,
  findEventEndpoint,
  insertEventEndpoint,
  listEventEndpoints,
  rotateEventEndpointSecret,
  updateEventEndpoint,
} from "../storage/eventEndpoints";
import { type AttemptRow, attemptsPage, eventUuidOf, replayEvent, replayEvents } from "../storage/eventOutbox";
import type { Paymaster } from "../storage/paymasters";
import { callableUrl } from "./httpUrl";
import { isUuid, type ManagementContext, type UrlCheck } from "./managementContext";
import { alwaysPaged, type Page, pageOf } from "./pageCursor";

/** An endpoint as its creation or rotation answers it: with its secret, which no other answer shows. */
export type EndpointWithSecret = EventEndpoint & { secretText: string };

/** The events in the order first named, each once. */
const distinct = (events: readonly string[]): string[] => [...new Set(events)];

/** The paymaster's endpoint named `id`, or its 404. */
async function endpointOf(ctx: ManagementContext, paymaster: Paymaster, id: string): Promise<EventEndpoint> {
  const endpoint = isUuid(id) ? await findEventEndpoint(ctx.db, paymaster.id, id) : undefined;
  if (!endpoint) throw new EventEndpointNotFoundError();
  return endpoint;
}

/**
 * A new endpoint with a new secret, sealed under the signing key before it is stored. Its URL is refused when the
 * service would refuse to call it (the webhooks' address guard).
 */
export async function createEventEndpoint(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: CreateEventEndpointBody,
  checkUrl: UrlCheck,
  signingKey: Secret,
): Promise<EndpointWithSecret> {
  const url = await callableUrl(body.url, "url", checkUrl);
  if ((await countEventEndpoints(ctx.db, paymaster.id)) >= MAX_EVENT_ENDPOINTS) {
    throw badRequest(`A paymaster has at most ${MAX_EVENT_ENDPOINTS} event endpoints`);
  }
  const id = randomUUID();
  const secretText = newEndpointSecret();
  await insertEventEndpoint(ctx.db, {
    id,
    paymasterId: paymaster.id,
    url,
    events: distinct(body.events),
    description: body.description ?? null,
    secret: sealSecret(signingKey, id, secretText),
    createdMs: ctx.now(),
  });
  // A subscription to deposit.low or limit.reached makes this instance decide the paymaster's alerts at once.
  ctx.alertsChanged?.(paymaster.id);
  return { ...(await endpointOf(ctx, paymaster, id)), secretText };
}

export const eventEndpointsOf = (ctx: ManagementContext, paymaster: Paymaster): Promise<EventEndpoint[]> =>
  listEventEndpoints(ctx.db, paymaster.id);

export const eventEndpointOf = (ctx: ManagementContext, paymaster: Paymaster, id: string): Promise<EventEndpoint> =>
  endpointOf(ctx, paymaster, id);

/** Changes the url (checked as at creation), the events, the note, or whether it is on. */
export async function changeEventEndpoint(
  ctx: ManagementContext,
  paymaster: Paymaster,
  id: string,
  body: UpdateEventEndpointBody,
  checkUrl: UrlCheck,
): Promise<EventEndpoint> {
  await endpointOf(ctx, paymaster, id);
  const url = body.url === undefined ? undefined : await callableUrl(body.url, "url", checkUrl);
  await updateEventEndpoint(ctx.db, paymaster.id, id, {
    ...(url === undefined ? {} : { url }),
    ...(body.events === undefined ? {} : { events: distinct(body.events) }),
    ...(body.description === undefined ? {} : { description: body.description }),
    ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
  });
  ctx.alertsChanged?.(paymaster.id);
  return endpointOf(ctx, paymaster, id);
}

export async function removeEventEndpoint(ctx: ManagementContext, paymaster: Paymaster, id: string): Promise<void> {
  if (!isUuid(id) || !(await deleteEventEndpoint(ctx.db, paymaster.id, id))) throw new EventEndpointNotFoundError();
  ctx.alertsChanged?.(paymaster.id);
}

/** A new secret; the replaced one signs beside it for `graceSeconds` (none: it stops at once). */
export async function rotateEventEndpoint(
  ctx: ManagementContext,
  paymaster: Paymaster,
  id: string,
  body: RotateSecretBody,
  signingKey: Secret,
): Promise<EndpointWithSecret> {
  await endpointOf(ctx, paymaster, id);
  const secretText = newEndpointSecret();
  const until = body.graceSeconds > 0 ? ctx.now() + body.graceSeconds * 1000 : null;
  await rotateEventEndpointSecret(ctx.db, paymaster.id, id, sealSecret(signingKey, id, secretText), until);
  return { ...(await endpointOf(ctx, paymaster, id)), secretText };
}

/** One page of the endpoint's attempts, newest first. */
export async function deliveriesOf(
  ctx: ManagementContext,
  paymaster: Paymaster,
  id: string,
  query: DeliveriesQuery,
): Promise<Page<AttemptRow>> {
  await endpointOf(ctx, paymaster, id);
  const page = alwaysPaged(query, "attempt");
  const rows = await attemptsPage(ctx.db, id, page.limit + 1, page.after?.key);
  return pageOf(
    rows.map(({ row, key }) => ({ item: row, cursor: { part: "attempt" as const, key } })),
    page.limit,
  );
}

/**
 * Queues one event again, or a range's events, after what the endpoint has queued; refuses a range of more than the
 * bound.
 */
export async function replayToEndpoint(
  ctx: ManagementContext,
  paymaster: Paymaster,
  id: string,
  body: ReplayBody,
): Promise<number> {
  await endpointOf(ctx, paymaster, id);
  if (body.eventId !== undefined) {
    if (!(await replayEvent(ctx.db, id, eventUuidOf(body.eventId)))) {
      throw badRequest("eventId names no event of this paymaster");
    }
    return 1;
  }
  if (body.from === undefined || body.to === undefined) throw badRequest("from and to are required, or eventId");
  if (body.from > body.to) throw badRequest("from must not be after to");
  const queued = await replayEvents(ctx.db, id, { fromMs: body.from, toMs: body.to }, MAX_REPLAY_EVENTS + 1);
  // The write's transaction rolls the queued rows back with the refusal.
  if (queued > MAX_REPLAY_EVENTS) {
    throw badRequest(`The range holds more than ${MAX_REPLAY_EVENTS} events: replay a shorter one`);
  }
  return queued;
}
