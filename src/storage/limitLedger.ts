import type { Queryable } from "./database";

/** One spending limit's share of one operation. */
export interface Reservation {
  policyId: string;
  cycleStartMs: number;
  /** '' for a PAYMASTER limit, the sender for a SMART_ACCOUNT limit. */
  scopeKey: string;
  sender: string;
  nonce: bigint;
  /** 1 for COUNT, the worst-case cost in wei for NATIVE_ASSET. */
  amount: bigint;
  /** COUNT, or wei for NATIVE_ASSET. */
  threshold: bigint;
  validUntil: number;
}

export type ReserveResult =
  | { reserved: true; used: bigint; previous: bigint | null }
  | { reserved: false; used: bigint };

/**
 * Check and reservation in one statement: the usage row is bumped only while it stays within the threshold (the
 * threshold sits in the upsert's WHERE), so any number of concurrent requests on any number of instances sharing the
 * database never take a limit past its threshold. A reservation already held by the same (sender, nonce) in this
 * cycle is replaced: only the difference is added. (Two such repeats racing each other may both add in full: the
 * error is on the safe side, the limit is never exceeded.)
 */
const RESERVE = `
  WITH previous AS (
    SELECT amount FROM limit_reservations
    WHERE policy_id = $1 AND cycle_start_ms = $2 AND sender = $4 AND nonce = $5::numeric
  ),
  counted AS (
    INSERT INTO limit_usage AS u (policy_id, cycle_start_ms, scope_key, used)
    VALUES ($1, $2, $3, $6::numeric - COALESCE((SELECT amount FROM previous), 0))
    ON CONFLICT (policy_id, cycle_start_ms, scope_key)
    DO UPDATE SET used = u.used + EXCLUDED.used
    WHERE u.used + EXCLUDED.used <= $7::numeric
    RETURNING used
  ),
  reserved AS (
    INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
    SELECT $1, $2, $4, $5::numeric, $3, $6::numeric, $8 FROM counted
    ON CONFLICT (policy_id, cycle_start_ms, sender, nonce)
    DO UPDATE SET amount = EXCLUDED.amount, valid_until = EXCLUDED.valid_until
    RETURNING 1
  )
  SELECT (SELECT used::text FROM counted) AS used,
         (SELECT amount::text FROM previous) AS previous,
         (SELECT count(*) FROM reserved) AS reserved`;

export async function reserve(db: Queryable, r: Reservation): Promise<ReserveResult> {
  // A fresh usage row is inserted without the WHERE check, so an amount above the threshold is refused here; with a
  // previous reservation the new total is still at least the amount, so this refusal is always right.
  if (r.amount > r.threshold) return { reserved: false, used: await usedIn(db, r) };
  const [row] = await db.query<{ used: string | null; previous: string | null }>(RESERVE, [
    r.policyId,
    r.cycleStartMs,
    r.scopeKey,
    r.sender,
    r.nonce.toString(),
    r.amount.toString(),
    r.threshold.toString(),
    r.validUntil,
  ]);
  if (!row || row.used === null) return { reserved: false, used: await usedIn(db, r) };
  return { reserved: true, used: BigInt(row.used), previous: row.previous === null ? null : BigInt(row.previous) };
}

/** Gives a reservation back: the usage drops by what it added, and a replaced reservation is restored. */
export async function unreserve(db: Queryable, r: Reservation, previous: bigint | null): Promise<void> {
  const added = r.amount - (previous ?? 0n);
  await db.query(
    `WITH restored AS (
       ${
         previous === null
           ? "DELETE FROM limit_reservations WHERE policy_id = $1 AND cycle_start_ms = $2 AND sender = $4 AND nonce = $5::numeric"
           : "UPDATE limit_reservations SET amount = $7::numeric WHERE policy_id = $1 AND cycle_start_ms = $2 AND sender = $4 AND nonce = $5::numeric"
       }
       RETURNING 1
     )
     UPDATE limit_usage SET used = GREATEST(used - $6::numeric, 0)
     WHERE policy_id = $1 AND cycle_start_ms = $2 AND scope_key = $3 AND EXISTS (SELECT 1 FROM restored)`,
    [
      r.policyId,
      r.cycleStartMs,
      r.scopeKey,
      r.sender,
      r.nonce.toString(),
      added.toString(),
      (previous ?? 0n).toString(),
    ],
  );
}

async function usedIn(db: Queryable, r: Pick<Reservation, "policyId" | "cycleStartMs" | "scopeKey">): Promise<bigint> {
  const [row] = await db.query<{ used: string }>(
    "SELECT used::text AS used FROM limit_usage WHERE policy_id = $1 AND cycle_start_ms = $2 AND scope_key = $3",
    [r.policyId, r.cycleStartMs, r.scopeKey],
  );
  return row ? BigInt(row.used) : 0n;
}

export interface UsageRow {
  policyId: string;
  scopeKey: string;
  used: bigint;
}

/** Current usage of the given limits in the given cycles, every scope. */
export async function usageOf(
  db: Queryable,
  cycles: { policyId: string; cycleStartMs: number }[],
): Promise<UsageRow[]> {
  if (cycles.length === 0) return [];
  const rows = await db.query<{ policy_id: string; scope_key: string; used: string }>(
    `SELECT u.policy_id, u.scope_key, u.used::text AS used
     FROM limit_usage u JOIN unnest($1::uuid[], $2::bigint[]) AS c(policy_id, cycle_start_ms)
       ON u.policy_id = c.policy_id AND u.cycle_start_ms = c.cycle_start_ms
     WHERE u.used > 0
     ORDER BY u.policy_id, u.scope_key`,
    [cycles.map((c) => c.policyId), cycles.map((c) => String(c.cycleStartMs))],
  );
  return rows.map((row) => ({ policyId: row.policy_id, scopeKey: row.scope_key, used: BigInt(row.used) }));
}
