import type { Queryable } from "./database";

// Event endpoints (docs/events.md): where a paymaster's events are pushed. The secrets arrive here sealed
// (src/events/sealedSecret.ts) and are stored as they come: the database never holds one in clear.

export interface EventEndpoint {
  id: string;
  paymasterId: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Why the service turned the endpoint off (it failed for a day); null otherwise. */
  disabledReason: string | null;
  /** Sealed. */
  secret: string;
  /** Sealed; signs too until `previousSecretUntilMs` (a rotation's grace period). */
  previousSecret: string | null;
  previousSecretUntilMs: number | null;
  createdMs: number;
  /** Since when its deliveries have been failing (the service's clock); null while they succeed. */
  failingSinceMs: number | null;
  /** Deliveries not yet made (not yet answered 2xx). */
  pending: number;
}

interface StoredEndpoint {
  id: string;
  paymaster_id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until_ms: string | null;
  created_ms: string;
  failing_since_ms: string | null;
  pending: string | number;
}

const COLUMNS = `e.id::text AS id, e.paymaster_id::text AS paymaster_id, e.url, e.events, e.description, e.enabled,
  e.disabled_reason, e.secret, e.previous_secret, e.previous_secret_until_ms::text AS previous_secret_until_ms,
  e.created_ms::text AS created_ms, p.failing_since_ms::text AS failing_since_ms,
  (SELECT count(*) FROM event_deliveries d WHERE d.endpoint_id = e.id AND d.delivered_ms IS NULL) AS pending`;

const FROM = "event_endpoints e LEFT JOIN event_endpoint_progress p ON p.endpoint_id = e.id";

const millisOrNull = (value: string | null) => (value === null ? null : Number(value));

function endpointOf(row: StoredEndpoint): EventEndpoint {
  return {
    id: row.id,
    paymasterId: row.paymaster_id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntilMs: millisOrNull(row.previous_secret_until_ms),
    createdMs: Number(row.created_ms),
    failingSinceMs: millisOrNull(row.failing_since_ms),
    pending: Number(row.pending),
  };
}

export interface NewEventEndpoint {
  id: string;
  paymasterId: string;
  url: string;
  events: readonly string[];
  description: string | null;
  /** Sealed. */
  secret: string;
  createdMs: number;
}

/** Adds an endpoint with its delivery progress (nothing sent yet), in one statement. */
export async function insertEventEndpoint(db: Queryable, endpoint: NewEventEndpoint): Promise<void> {
  await db.query(
    `WITH e AS (
       INSERT INTO event_endpoints (id, paymaster_id, url, events, description, secret, created_ms)
       VALUES ($1, $2, $3, $4::text[], $5, $6, $7) RETURNING id
     )
     INSERT INTO event_endpoint_progress (endpoint_id) SELECT id FROM e`,
    [
      endpoint.id,
      endpoint.paymasterId,
      endpoint.url,
      [...endpoint.events],
      endpoint.description,
      endpoint.secret,
      String(endpoint.createdMs),
    ],
  );
}

/** The paymaster's endpoints, oldest first. */
export async function listEventEndpoints(db: Queryable, paymasterId: string): Promise<EventEndpoint[]> {
  const rows = await db.query<StoredEndpoint>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE e.paymaster_id = $1 ORDER BY e.created_ms, e.id`,
    [paymasterId],
  );
  return rows.map(endpointOf);
}

export async function findEventEndpoint(
  db: Queryable,
  paymasterId: string,
  id: string,
): Promise<EventEndpoint | undefined> {
  const [row] = await db.query<StoredEndpoint>(
    `SELECT ${COLUMNS} FROM ${FROM} WHERE e.paymaster_id = $1 AND e.id = $2`,
    [paymasterId, id],
  );
  return row ? endpointOf(row) : undefined;
}

export interface EventEndpointChange {
  url?: string;
  events?: readonly string[];
  description?: string | null;
  enabled?: boolean;
}

/**
 * Changes what is given; turning an endpoint on forgets why it was off and since when it failed, so its pending
 * deliveries are tried at once, in their order. False when the paymaster has no such endpoint.
 */
export async function updateEventEndpoint(
  db: Queryable,
  paymasterId: string,
  id: string,
  change: EventEndpointChange,
): Promise<boolean> {
  const rows = await db.query(
    `WITH changed AS (
       UPDATE event_endpoints SET
         url = COALESCE($3, url),
         events = COALESCE($4::text[], events),
         description = CASE WHEN $5::boolean THEN $6 ELSE description END,
         enabled = COALESCE($7, enabled),
         disabled_reason = CASE WHEN $7 IS NULL THEN disabled_reason ELSE NULL END
       WHERE paymaster_id = $1 AND id = $2
       RETURNING id, enabled
     ), progress AS (
       UPDATE event_endpoint_progress p SET failing_since_ms = NULL, next_attempt_ms = 0
       FROM changed c WHERE p.endpoint_id = c.id AND $7 AND c.enabled
     )
     SELECT 1 FROM changed`,
    [
      paymasterId,
      id,
      change.url ?? null,
      change.events ? [...change.events] : null,
      change.description !== undefined,
      change.description ?? null,
      change.enabled ?? null,
    ],
  );
  return rows.length > 0;
}

/** Deletes an endpoint with its queue and its attempts. False when the paymaster has no such endpoint. */
export async function deleteEventEndpoint(db: Queryable, paymasterId: string, id: string): Promise<boolean> {
  const rows = await db.query("DELETE FROM event_endpoints WHERE paymaster_id = $1 AND id = $2 RETURNING id", [
    paymasterId,
    id,
  ]);
  return rows.length > 0;
}

/**
 * Replaces the secret (sealed) by `secret`; the one it replaces keeps signing until `previousUntilMs`, or stops at once
 * when that is null. A rotation during another's grace period ends the older secret's.
 */
export async function rotateEventEndpointSecret(
  db: Queryable,
  paymasterId: string,
  id: string,
  secret: string,
  previousUntilMs: number | null,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE event_endpoints SET
       previous_secret = CASE WHEN $4::bigint IS NULL THEN NULL ELSE secret END,
       previous_secret_until_ms = $4::bigint,
       secret = $3
     WHERE paymaster_id = $1 AND id = $2
     RETURNING id`,
    [paymasterId, id, secret, previousUntilMs === null ? null : String(previousUntilMs)],
  );
  return rows.length > 0;
}

/** How many endpoints the paymaster has (a bound keeps the list short). */
export async function countEventEndpoints(db: Queryable, paymasterId: string): Promise<number> {
  const [row] = await db.query<{ n: string | number }>(
    "SELECT count(*) AS n FROM event_endpoints WHERE paymaster_id = $1",
    [paymasterId],
  );
  return Number(row?.n ?? 0);
}
