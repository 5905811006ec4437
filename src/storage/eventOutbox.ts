import type { Queryable } from "./database";
import { CREATED_MICROS, keyOfRow, keyParams, type PageKey } from "./pageKey";

/**
 * A statement's step that queues the events of `source` (a CTE returning id, paymaster_id and type) to every enabled
 * endpoint of their paymaster subscribed to their type, in the events' order: where an event is written, its
 * deliveries are queued in the same statement (the outbox here, sponsorship.signed with the ledger's row).
 */
export const queueDeliveriesOf = (source: string) => `
    INSERT INTO event_deliveries (endpoint_id, event_id)
    SELECT p.id, k.id FROM ${source} k
    JOIN event_endpoints p ON p.paymaster_id = k.paymaster_id AND p.enabled AND k.type = ANY (p.events)
    ORDER BY k.id, p.id`;

// The events' outbox (docs/events.md): facts written in the transaction of the fact, a queue per endpoint, and the
// statements delivery works with. Delivery to an endpoint is one instance's at a time (a lease taken with FOR UPDATE
// SKIP LOCKED), and every write it makes names the lease, so an instance whose lease ran out changes nothing.

/** An event's id as receivers see it (the webhook-id header, the body's id): `evt_` and its UUID's 32 hex digits. */
export const publicEventId = (uuid: string): string => `evt_${uuid.replaceAll("-", "")}`;

/** One fact to queue: `data` is the event's payload as the endpoint receives it. */
export interface NewEvent {
  paymasterId: string;
  chainId: number;
  type: string;
  data: Record<string, unknown>;
}

/**
 * Queues facts, in one statement so that it joins the caller's transaction as one step: an event is kept only when an
 * endpoint of its paymaster subscribes to its type (enabled or not, so that a replay can send it later), and queued to
 * every such endpoint that is enabled. `atMs`: the fact's time by the service's clock. Returns the events kept.
 */
export async function queueEvents(db: Queryable, events: readonly NewEvent[], atMs: number): Promise<number> {
  if (events.length === 0) return 0;
  const [row] = await db.query<{ n: string | number }>(
    `WITH e AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[]) WITH ORDINALITY
         AS e(paymaster_id, chain_id, type, data, n)
     ), kept AS (
       INSERT INTO events (paymaster_id, chain_id, type, data, at_ms)
       SELECT e.paymaster_id, e.chain_id, e.type, e.data::jsonb, $5 FROM e
       WHERE EXISTS (SELECT 1 FROM event_endpoints p WHERE p.paymaster_id = e.paymaster_id AND e.type = ANY (p.events))
       ORDER BY e.n
       RETURNING id, paymaster_id, type
     ), queued AS (${queueDeliveriesOf("kept")})
     SELECT count(*) AS n FROM kept`,
    [
      events.map((event) => event.paymasterId),
      events.map((event) => String(event.chainId)),
      events.map((event) => event.type),
      events.map((event) => JSON.stringify(event.data)),
      String(atMs),
    ],
  );
  return Number(row?.n ?? 0);
}

/** An endpoint whose queue this instance delivers until `leaseUntilMs`. */
export interface ClaimedEndpoint {
  endpointId: string;
  paymasterId: string;
  leaseToken: string;
  leaseUntilMs: number;
  url: string;
  /** Sealed. */
  secret: string;
  previousSecret: string | null;
  previousSecretUntilMs: number | null;
  failingSinceMs: number | null;
}

/**
 * Takes up to `limit` enabled endpoints with something to deliver that is due and that no instance holds, each for
 * `leaseMs`. FOR UPDATE SKIP LOCKED: instances claiming at once take different endpoints.
 */
export async function claimEndpoints(
  db: Queryable,
  nowMs: number,
  leaseMs: number,
  limit: number,
  except: readonly string[] = [],
): Promise<ClaimedEndpoint[]> {
  const rows = await db.query<{
    endpoint_id: string;
    paymaster_id: string;
    lease_token: string;
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_secret_until_ms: string | null;
    failing_since_ms: string | null;
  }>(
    `UPDATE event_endpoint_progress p SET lease_until_ms = $2, lease_token = gen_random_uuid()
     FROM event_endpoints e
     WHERE e.id = p.endpoint_id AND p.endpoint_id IN (
       SELECT q.endpoint_id FROM event_endpoint_progress q JOIN event_endpoints f ON f.id = q.endpoint_id
       WHERE f.enabled AND q.lease_until_ms <= $1 AND q.next_attempt_ms <= $1 AND NOT (q.endpoint_id = ANY ($4::uuid[]))
         AND EXISTS (SELECT 1 FROM event_deliveries d WHERE d.endpoint_id = q.endpoint_id AND d.delivered_ms IS NULL)
       ORDER BY q.next_attempt_ms, q.endpoint_id LIMIT $3
       FOR UPDATE OF q SKIP LOCKED)
     RETURNING p.endpoint_id::text AS endpoint_id, e.paymaster_id::text AS paymaster_id,
       p.lease_token::text AS lease_token, e.url, e.secret, e.previous_secret,
       e.previous_secret_until_ms::text AS previous_secret_until_ms, p.failing_since_ms::text AS failing_since_ms`,
    [String(nowMs), String(nowMs + leaseMs), limit, [...except]],
  );
  return rows.map((row) => ({
    endpointId: row.endpoint_id,
    paymasterId: row.paymaster_id,
    leaseToken: row.lease_token,
    leaseUntilMs: nowMs + leaseMs,
    url: row.url,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntilMs: row.previous_secret_until_ms === null ? null : Number(row.previous_secret_until_ms),
    failingSinceMs: row.failing_since_ms === null ? null : Number(row.failing_since_ms),
  }));
}

/** Leases held by no process: the embedded database has one process, so at its start every lease is a dead one's. */
export async function dropLeases(db: Queryable): Promise<void> {
  await db.query(
    "UPDATE event_endpoint_progress SET lease_until_ms = 0, lease_token = NULL WHERE lease_token IS NOT NULL",
  );
}

export interface Lease {
  endpointId: string;
  leaseToken: string;
}

/**
 * Gives the endpoint's deliveries that have no sequence yet the next numbers, in the order they were queued (up to
 * 1,000 at a time). Only the lease's holder numbers, so numbers are never given twice; a delivery committed after a
 * later-queued one was numbered gets a number after it: the order is the numbers', and they never change.
 */
export async function sequenceDeliveries(db: Queryable, lease: Lease): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    `WITH lease AS (
       SELECT last_sequence FROM event_endpoint_progress WHERE endpoint_id = $1 AND lease_token = $2 FOR UPDATE
     ), todo AS (
       SELECT d.id, row_number() OVER (ORDER BY d.id) AS n FROM event_deliveries d
       WHERE d.endpoint_id = $1 AND d.sequence IS NULL AND EXISTS (SELECT 1 FROM lease)
       ORDER BY d.id LIMIT 1000
     ), numbered AS (
       UPDATE event_deliveries d SET sequence = lease.last_sequence + todo.n FROM todo, lease WHERE d.id = todo.id
     ), moved AS (
       UPDATE event_endpoint_progress p SET last_sequence = p.last_sequence + (SELECT count(*) FROM todo)
       WHERE p.endpoint_id = $1 AND p.lease_token = $2 AND EXISTS (SELECT 1 FROM todo)
     )
     SELECT count(*) AS n FROM todo`,
    [lease.endpointId, lease.leaseToken],
  );
  return Number(row?.n ?? 0);
}

/** One queued delivery, with its event. */
export interface QueuedDelivery {
  deliveryId: string;
  sequence: number;
  /** Attempts made so far. */
  attempts: number;
  eventId: string;
  type: string;
  /** The event's payload as stored. */
  data: Record<string, unknown>;
  /** The fact's time, ms (the service's clock). */
  atMs: number;
}

/** The next `limit` deliveries of an endpoint, in sequence order. */
export async function nextDeliveries(db: Queryable, endpointId: string, limit: number): Promise<QueuedDelivery[]> {
  const rows = await db.query<{
    id: string;
    sequence: string;
    attempts: number;
    event_id: string;
    type: string;
    data: Record<string, unknown> | string;
    at_ms: string;
  }>(
    `SELECT d.id::text AS id, d.sequence::text AS sequence, d.attempts, e.event_id::text AS event_id, e.type, e.data,
       e.at_ms::text AS at_ms
     FROM event_deliveries d JOIN events e ON e.id = d.event_id
     WHERE d.endpoint_id = $1 AND d.delivered_ms IS NULL AND d.sequence IS NOT NULL
     ORDER BY d.sequence LIMIT $2`,
    [endpointId, limit],
  );
  return rows.map((row) => ({
    deliveryId: row.id,
    sequence: Number(row.sequence),
    attempts: Number(row.attempts),
    eventId: row.event_id,
    type: row.type,
    data: typeof row.data === "string" ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
    atMs: Number(row.at_ms),
  }));
}

/** What one attempt found. */
export interface AttemptOutcome {
  id: string;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  atMs: number;
}

/** An attempt and the delivery it was for. */
export interface Attempt {
  delivery: QueuedDelivery;
  outcome: AttemptOutcome;
}

/**
 * Records the attempts made at the head of the queue since the last record, in one statement and only while the lease
 * holds: every one delivered but perhaps the last, which failed, the queue then due again at `nextAttemptMs`. Returns
 * since when the endpoint has been failing (null once delivered), or undefined when the lease was lost and nothing
 * was written (whoever holds it now sends those deliveries again: at least once, with their ids).
 */
export async function recordAttempts(
  db: Queryable,
  lease: Lease,
  attempts: readonly Attempt[],
  nextAttemptMs: number,
): Promise<{ failingSinceMs: number | null } | undefined> {
  const last = attempts.at(-1);
  if (!last) return undefined;
  const failed = !last.outcome.delivered;
  const [row] = await db.query<{ failing_since_ms: string | null }>(
    `WITH lease AS (
       SELECT 1 FROM event_endpoint_progress WHERE endpoint_id = $1 AND lease_token = $2
     ), a AS (
       SELECT * FROM unnest($3::bigint[], $4::uuid[], $5::boolean[], $6::int[], $7::text[], $8::int[], $9::bigint[],
         $10::uuid[], $11::text[], $12::bigint[]) AS a(delivery_id, id, delivered, status_code, error, duration_ms, at_ms,
         event_id, type, sequence)
       WHERE EXISTS (SELECT 1 FROM lease)
     ), done AS (
       UPDATE event_deliveries d SET attempts = d.attempts + 1,
         delivered_ms = CASE WHEN a.delivered THEN a.at_ms ELSE NULL END
       FROM a WHERE d.id = a.delivery_id AND d.delivered_ms IS NULL
       RETURNING d.id, d.attempts
     ), progress AS (
       UPDATE event_endpoint_progress SET
         failing_since_ms = CASE WHEN $13::boolean THEN COALESCE(failing_since_ms, $14::bigint) ELSE NULL END,
         next_attempt_ms = CASE WHEN $13::boolean THEN $15::bigint ELSE 0 END
       WHERE endpoint_id = $1 AND lease_token = $2
       RETURNING failing_since_ms
     ), logged AS (
       INSERT INTO event_attempts (id, endpoint_id, delivery_id, event_id, type, sequence, attempt, delivered,
         status_code, error, duration_ms, at_ms)
       SELECT a.id, $1, a.delivery_id, a.event_id, a.type, a.sequence, done.attempts, a.delivered, a.status_code, a.error,
         a.duration_ms, a.at_ms
       FROM a JOIN done ON done.id = a.delivery_id
     )
     SELECT failing_since_ms::text AS failing_since_ms FROM progress`,
    [
      lease.endpointId,
      lease.leaseToken,
      attempts.map((a) => a.delivery.deliveryId),
      attempts.map((a) => a.outcome.id),
      attempts.map((a) => a.outcome.delivered),
      attempts.map((a) => a.outcome.statusCode),
      attempts.map((a) => a.outcome.error),
      attempts.map((a) => a.outcome.durationMs),
      attempts.map((a) => String(a.outcome.atMs)),
      attempts.map((a) => a.delivery.eventId),
      attempts.map((a) => a.delivery.type),
      attempts.map((a) => String(a.delivery.sequence)),
      failed,
      String(last.outcome.atMs),
      String(nextAttemptMs),
    ],
  );
  if (!row) return undefined;
  return { failingSinceMs: row.failing_since_ms === null ? null : Number(row.failing_since_ms) };
}

/** Hands the endpoint back: any instance may claim it once it is due. */
export async function releaseLease(db: Queryable, lease: Lease): Promise<void> {
  await db.query(
    "UPDATE event_endpoint_progress SET lease_until_ms = 0, lease_token = NULL WHERE endpoint_id = $1 AND lease_token = $2",
    [lease.endpointId, lease.leaseToken],
  );
}

/**
 * Turns off an endpoint that has failed for too long, and queues the account's alert (`endpoint.disabled`, to the
 * paymaster's alert URL when it has one), in one statement. False when the lease was lost (another instance decides).
 */
export async function disableFailingEndpoint(
  db: Queryable,
  lease: Lease,
  reason: string,
  alertBody: string,
  nowMs: number,
): Promise<boolean> {
  const rows = await db.query(
    `WITH lease AS (
       SELECT 1 FROM event_endpoint_progress WHERE endpoint_id = $1 AND lease_token = $2
     ), off AS (
       UPDATE event_endpoints SET enabled = false, disabled_reason = $3
       WHERE id = $1 AND enabled AND EXISTS (SELECT 1 FROM lease)
       RETURNING paymaster_id
     ), alert AS (
       INSERT INTO alert_outbox (paymaster_id, event, url, body, created_ms, next_attempt_ms)
       SELECT s.paymaster_id, 'endpoint.disabled', s.url, $4, $5, $5
       FROM alert_settings s JOIN off ON off.paymaster_id = s.paymaster_id
     )
     SELECT 1 FROM off`,
    [lease.endpointId, lease.leaseToken, reason, alertBody, String(nowMs)],
  );
  return rows.length > 0;
}

/**
 * Queues again, after whatever the endpoint has queued, the events of its paymaster from `fromMs` (included) to `toMs`
 * (excluded) of the types it subscribes to now, oldest first: at most `max`. Returns how many were queued.
 */
export async function replayEvents(
  db: Queryable,
  endpointId: string,
  range: { fromMs: number; toMs: number },
  max: number,
): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    `WITH queued AS (
       INSERT INTO event_deliveries (endpoint_id, event_id)
       SELECT p.id, e.id FROM event_endpoints p
       JOIN events e ON e.paymaster_id = p.paymaster_id AND e.type = ANY (p.events)
       WHERE p.id = $1 AND e.at_ms >= $2 AND e.at_ms < $3
       ORDER BY e.id LIMIT $4
       RETURNING 1
     )
     SELECT count(*) AS n FROM queued`,
    [endpointId, String(range.fromMs), String(range.toMs), max],
  );
  return Number(row?.n ?? 0);
}

/** Queues one event of the endpoint's paymaster again, after whatever the endpoint has queued; false when none has that id. */
export async function replayEvent(db: Queryable, endpointId: string, eventUuid: string): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO event_deliveries (endpoint_id, event_id)
     SELECT p.id, e.id FROM event_endpoints p JOIN events e ON e.paymaster_id = p.paymaster_id
     WHERE p.id = $1 AND e.event_id = $2
     RETURNING 1`,
    [endpointId, eventUuid],
  );
  return rows.length > 0;
}

/** The UUID of an event's public id (`evt_` and 32 hex digits). */
export const eventUuidOf = (publicId: string): string => {
  const hex = publicId.slice("evt_".length);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** One attempt as the deliveries list shows it. */
export interface AttemptRow {
  eventId: string;
  type: string;
  sequence: number;
  attempt: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  atMs: number;
}

/** An endpoint's attempts, newest first, `limit` after `before` (the ledger's paging: created_at, then id). */
export async function attemptsPage(
  db: Queryable,
  endpointId: string,
  limit: number,
  before?: PageKey,
): Promise<{ row: AttemptRow; key: PageKey }[]> {
  const params: unknown[] = [endpointId, limit];
  let after = "";
  if (before) {
    params.push(...keyParams(before));
    after = "AND (created_at, id) < ($3::timestamptz, $4::uuid)";
  }
  const rows = await db.query<{
    id: string;
    created_micros: string;
    event_id: string;
    type: string;
    sequence: string;
    attempt: number;
    delivered: boolean;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    at_ms: string;
  }>(
    `SELECT id::text AS id, ${CREATED_MICROS}, event_id::text AS event_id, type, sequence::text AS sequence, attempt,
       delivered, status_code, error, duration_ms, at_ms::text AS at_ms
     FROM event_attempts WHERE endpoint_id = $1 ${after}
     ORDER BY created_at DESC, id DESC LIMIT $2`,
    params,
  );
  return rows.map((stored) => ({
    row: {
      eventId: publicEventId(stored.event_id),
      type: stored.type,
      sequence: Number(stored.sequence),
      attempt: Number(stored.attempt),
      delivered: stored.delivered,
      statusCode: stored.status_code === null ? null : Number(stored.status_code),
      error: stored.error,
      durationMs: Number(stored.duration_ms),
      atMs: Number(stored.at_ms),
    },
    key: keyOfRow(stored),
  }));
}

/** Deliveries not yet made, every endpoint's: the backlog the metrics show. */
export async function undeliveredCount(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    "SELECT count(*) AS n FROM event_deliveries WHERE delivered_ms IS NULL",
  );
  return Number(row?.n ?? 0);
}

/**
 * Forgets what is older than `beforeMs`: attempts, delivered deliveries, and events no delivery waits for. Pending
 * deliveries stay whatever their age (an endpoint turned off keeps its queue until it is turned on or deleted).
 */
export async function pruneEvents(db: Queryable, beforeMs: number): Promise<void> {
  const before = String(beforeMs);
  await db.query("DELETE FROM event_attempts WHERE at_ms < $1", [before]);
  await db.query(
    `DELETE FROM events e WHERE e.at_ms < $1
       AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id AND d.delivered_ms IS NULL)`,
    [before],
  );
}
