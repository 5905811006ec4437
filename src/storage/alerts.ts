import type { Queryable } from "./database";

// Alerts (docs/alerts.md): the settings per paymaster, the "once per crossing" and "once per cycle" decisions, and the
// outbox the delivery works from. Every decision is one statement, so that concurrent sponsorships on any number of
// instances sharing the database enqueue one alert between them.

export interface AlertSettings {
  paymasterId: string;
  thresholdWei: bigint;
  url: string;
}

/** Sets (or replaces) a paymaster's alerts. A new threshold re-arms deposit.low: the next check decides afresh. */
export async function saveAlertSettings(db: Queryable, settings: AlertSettings): Promise<void> {
  await db.query(
    `WITH saved AS (
       INSERT INTO alert_settings (paymaster_id, threshold_wei, url) VALUES ($1, $2, $3)
       ON CONFLICT (paymaster_id) DO UPDATE SET threshold_wei = EXCLUDED.threshold_wei, url = EXCLUDED.url,
         updated_at = now()
       RETURNING paymaster_id)
     DELETE FROM deposit_alert_state d USING saved WHERE d.paymaster_id = saved.paymaster_id`,
    [settings.paymasterId, settings.thresholdWei.toString(), settings.url],
  );
}

/** Turns a paymaster's alerts off; alerts already queued are still delivered. */
export async function removeAlertSettings(db: Queryable, paymasterId: string): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM alert_settings WHERE paymaster_id = $1 RETURNING paymaster_id)
     DELETE FROM deposit_alert_state d USING gone WHERE d.paymaster_id = gone.paymaster_id`,
    [paymasterId],
  );
}

/** An event endpoint of the paymaster subscribes to `type` (docs/events.md): the CTE's one row, or none. */
const subscribed = (type: string, paymaster: string) =>
  `SELECT ${paymaster}::uuid AS paymaster_id WHERE EXISTS (SELECT 1 FROM event_endpoints e
     WHERE e.paymaster_id = ${paymaster}::uuid AND '${type}' = ANY (e.events))`;

/** The event of an alert queued to the paymaster's enabled endpoints that subscribe to it (from `ev`'s rows). */
const QUEUE_ALERT_EVENT = `INSERT INTO event_deliveries (endpoint_id, event_id)
       SELECT e.id, ev.id FROM ev JOIN event_endpoints e ON e.paymaster_id = ev.paymaster_id AND e.enabled
         AND ev.type = ANY (e.events)
       ORDER BY ev.id, e.id`;

/**
 * Whether a paymaster wants its alerts decided: alert settings (a URL and a threshold), or an event endpoint
 * subscribed to deposit.low or limit.reached.
 */
export async function alertsWanted(db: Queryable, paymasterId: string): Promise<boolean> {
  const [row] = await db.query<{ wanted: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM alert_settings WHERE paymaster_id = $1)
       OR EXISTS (SELECT 1 FROM event_endpoints WHERE paymaster_id = $1
         AND events && ARRAY['deposit.low', 'limit.reached']) AS wanted`,
    [paymasterId],
  );
  return row?.wanted === true;
}

export async function findAlertSettings(db: Queryable, paymasterId: string): Promise<AlertSettings | null> {
  const [row] = await db.query<{ threshold_wei: string; url: string }>(
    "SELECT threshold_wei::text AS threshold_wei, url FROM alert_settings WHERE paymaster_id = $1",
    [paymasterId],
  );
  return row ? { paymasterId, thresholdWei: BigInt(row.threshold_wei), url: row.url } : null;
}

/** One reading of a deposit: what the chain holds and what unexpired sponsorships can still take from it. */
export interface DepositFigure {
  paymasterId: string;
  chainId: number;
  /** The verifying paymaster holding the deposit (lowercase): one per EntryPoint version. */
  paymasterAddress: string;
  entryPointVersion: string;
  depositWei: bigint;
  outstandingWei: bigint;
  /** ISO 8601, by the service's clock. */
  at: string;
  nowMs: number;
}

/**
 * Notes whether the available deposit (deposit less outstanding) is below the paymaster's threshold; when that flips
 * from not below (or unknown) to below, enqueues one deposit.low in the same statement, to the alert URL and as an
 * event to the endpoints subscribed to it. The upsert's WHERE makes the flip happen once: a concurrent reading that
 * also finds it below waits for the row lock, then changes nothing. Returns whether an alert was enqueued. Without
 * alert settings (the threshold) nothing is written.
 */
export async function noteDepositFigure(db: Queryable, figure: DepositFigure): Promise<boolean> {
  const available = figure.depositWei - figure.outstandingWei;
  const rows = await db.query<{ id: string }>(
    `WITH s AS (
       SELECT paymaster_id, threshold_wei, url FROM alert_settings WHERE paymaster_id = $1
     ), flip AS (
       INSERT INTO deposit_alert_state AS d (paymaster_id, paymaster_address, below)
       SELECT paymaster_id, $2, $3::numeric < threshold_wei FROM s
       ON CONFLICT (paymaster_id, paymaster_address) DO UPDATE SET below = EXCLUDED.below
         WHERE d.below IS DISTINCT FROM EXCLUDED.below
       RETURNING below
     ), ev AS (
       INSERT INTO events (paymaster_id, chain_id, type, data, at_ms)
       SELECT s.paymaster_id, $4::int, 'deposit.low',
         jsonb_build_object('paymasterId', s.paymaster_id, 'chainId', $4::int, 'depositWei', $5::text,
           'outstandingWei', $6::text, 'availableWei', $3::text, 'thresholdWei', s.threshold_wei::text, 'at', $7::text,
           'entryPointVersion', $8::text, 'verifyingPaymaster', $2::text),
         $9::bigint
       FROM s, flip, (${subscribed("deposit.low", "$1")}) sub WHERE flip.below
       RETURNING id, paymaster_id, type
     ), evd AS (
       ${QUEUE_ALERT_EVENT}
     )
     INSERT INTO alert_outbox (paymaster_id, event, url, body, created_ms, next_attempt_ms)
     SELECT s.paymaster_id, 'deposit.low', s.url,
       json_build_object('event', 'deposit.low', 'paymasterId', s.paymaster_id, 'chainId', $4::int,
         'depositWei', $5::text, 'outstandingWei', $6::text, 'availableWei', $3::text,
         'thresholdWei', s.threshold_wei::text, 'at', $7::text,
         'entryPointVersion', $8::text, 'verifyingPaymaster', $2::text)::text,
       $9, $9
     FROM s, flip WHERE flip.below
     RETURNING id::text AS id`,
    [
      figure.paymasterId,
      figure.paymasterAddress,
      available.toString(),
      figure.chainId,
      figure.depositWei.toString(),
      figure.outstandingWei.toString(),
      figure.at,
      figure.entryPointVersion,
      String(figure.nowMs),
    ],
  );
  return rows.length > 0;
}

/** A spending limit that refused an operation: which limit, in which cycle, and why. */
export interface LimitRefusal {
  paymasterId: string;
  chainId: number;
  policyId: string;
  policyName: string;
  cycleStartMs: number;
  reason: string;
  at: string;
  nowMs: number;
}

/** What became of a limit refusal: an alert queued, one already queued for the cycle, or no alerts set. */
export type LimitNote = "queued" | "alreadyQueued" | "alertsOff";

/**
 * Enqueues limit.reached for the first refusal of a limit in a cycle, to the alert URL and as an event to the
 * endpoints subscribed to it: the insert into limit_alerts that wins decides, on any number of instances. Without
 * alert settings or such an endpoint nothing is written, so one set later in the cycle still gets the cycle's next
 * refusal.
 */
export async function noteLimitRefusal(db: Queryable, refusal: LimitRefusal): Promise<LimitNote> {
  const [row] = await db.query<{ configured: boolean; queued: boolean }>(
    `WITH s AS (
       SELECT paymaster_id, url FROM alert_settings WHERE paymaster_id = $1
     ), sub AS (
       ${subscribed("limit.reached", "$1")}
     ), wanted AS (
       SELECT 1 WHERE EXISTS (SELECT 1 FROM s) OR EXISTS (SELECT 1 FROM sub)
     ), mark AS (
       INSERT INTO limit_alerts (policy_id, cycle_start_ms) SELECT $2::uuid, $3::bigint FROM wanted
       ON CONFLICT DO NOTHING
       RETURNING policy_id
     ), ev AS (
       INSERT INTO events (paymaster_id, chain_id, type, data, at_ms)
       SELECT sub.paymaster_id, $4::int, 'limit.reached',
         jsonb_build_object('paymasterId', sub.paymaster_id, 'chainId', $4::int, 'policyId', $2::text,
           'policyName', $5::text, 'cycleStart', $6::text, 'reason', $7::text, 'at', $8::text),
         $9::bigint
       FROM sub, mark
       RETURNING id, paymaster_id, type
     ), evd AS (
       ${QUEUE_ALERT_EVENT}
     ), queued AS (
       INSERT INTO alert_outbox (paymaster_id, event, url, body, created_ms, next_attempt_ms)
       SELECT s.paymaster_id, 'limit.reached', s.url,
         json_build_object('event', 'limit.reached', 'paymasterId', s.paymaster_id, 'chainId', $4::int,
           'policyId', $2::text, 'policyName', $5::text, 'cycleStart', $6::text, 'reason', $7::text,
           'at', $8::text)::text,
         $9, $9
       FROM s, mark
       RETURNING id
     )
     SELECT EXISTS (SELECT 1 FROM wanted) AS configured, EXISTS (SELECT 1 FROM mark) AS queued`,
    [
      refusal.paymasterId,
      refusal.policyId,
      String(refusal.cycleStartMs),
      refusal.chainId,
      refusal.policyName,
      new Date(refusal.cycleStartMs).toISOString(),
      refusal.reason,
      refusal.at,
      String(refusal.nowMs),
    ],
  );
  if (!row?.configured) return "alertsOff";
  return row.queued ? "queued" : "alreadyQueued";
}

/** An alert claimed for one delivery attempt. */
export interface ClaimedAlert {
  id: string;
  paymasterId: string;
  accountId: string;
  event: string;
  url: string;
  body: string;
  createdMs: number;
  /** This attempt included. */
  attempts: number;
}

/**
 * Claims up to `limit` alerts due at `nowMs` for `leaseMs`: no other instance takes them meanwhile (SKIP LOCKED on
 * PostgreSQL; the lease covers an instance that stops mid-attempt, whose alerts are taken again once it ends).
 */
export async function claimDueAlerts(
  db: Queryable,
  nowMs: number,
  leaseMs: number,
  limit: number,
): Promise<ClaimedAlert[]> {
  const rows = await db.query<{
    id: string;
    paymaster_id: string;
    account_id: string;
    event: string;
    url: string;
    body: string;
    created_ms: string;
    attempts: number;
  }>(
    `UPDATE alert_outbox o SET claimed_until_ms = $2, attempts = o.attempts + 1
     FROM paymasters p
     WHERE p.id = o.paymaster_id AND o.id IN (
       SELECT id FROM alert_outbox
       WHERE state = 'pending' AND next_attempt_ms <= $1 AND claimed_until_ms <= $1
       ORDER BY next_attempt_ms, id LIMIT $3
       FOR UPDATE SKIP LOCKED)
     RETURNING o.id::text AS id, o.paymaster_id::text AS paymaster_id, p.account_id::text AS account_id, o.event,
       o.url, o.body, o.created_ms::text AS created_ms, o.attempts`,
    [String(nowMs), String(nowMs + leaseMs), limit],
  );
  return rows.map((row) => ({
    id: row.id,
    paymasterId: row.paymaster_id,
    accountId: row.account_id,
    event: row.event,
    url: row.url,
    body: row.body,
    createdMs: Number(row.created_ms),
    attempts: Number(row.attempts),
  }));
}

export async function markAlertSent(db: Queryable, id: string): Promise<void> {
  await db.query("UPDATE alert_outbox SET state = 'sent', last_error = NULL WHERE id = $1", [id]);
}

/** A failed attempt: tried again at `nextAttemptMs`, or given up (`nextAttemptMs` null). */
export async function markAlertFailed(
  db: Queryable,
  id: string,
  error: string,
  nextAttemptMs: number | null,
): Promise<void> {
  await db.query(
    nextAttemptMs === null
      ? "UPDATE alert_outbox SET state = 'failed', last_error = $2 WHERE id = $1"
      : "UPDATE alert_outbox SET next_attempt_ms = $3, claimed_until_ms = 0, last_error = $2 WHERE id = $1",
    nextAttemptMs === null ? [id, error] : [id, error, String(nextAttemptMs)],
  );
}

/** Forgets delivered and given-up alerts queued before `beforeMs`; pending ones stay whatever their age. */
export async function pruneAlerts(db: Queryable, beforeMs: number): Promise<void> {
  await db.query("DELETE FROM alert_outbox WHERE state <> 'pending' AND created_ms < $1", [String(beforeMs)]);
}

/** A paymaster whose deposit the periodic check reads: alerts set and a funding wallet linked. */
export interface WatchedDeposit {
  paymasterId: string;
  chainId: number;
  fundingAddress: string;
}

export async function watchedDeposits(db: Queryable): Promise<WatchedDeposit[]> {
  const rows = await db.query<{ id: string; chain_id: number; funding_address: string }>(
    `SELECT p.id::text AS id, p.chain_id, p.funding_address FROM alert_settings a
     JOIN paymasters p ON p.id = a.paymaster_id WHERE p.funding_address IS NOT NULL ORDER BY p.id`,
  );
  return rows.map((row) => ({
    paymasterId: row.id,
    chainId: Number(row.chain_id),
    fundingAddress: row.funding_address,
  }));
}
