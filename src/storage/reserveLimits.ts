import { type Queryable, UniqueViolation } from "./database";
import type { Reservation, ReserveOutcome } from "./limitLedger";
import { heldKey, type LimitWrites, usageKey } from "./memoryLedger";
import type { ArrayParameter } from "./pglitePrepared";

/**
 * The batch's usage rows, locked (created first when some are missing), then the reservations its (sender, nonce)
 * already hold, in one call of migration 16's function. The locks are taken in one fixed order, the keys sorted (the
 * order settlement locks them in too), so concurrent batches never wait on each other in a cycle; each row is looked
 * up by primary key and locked in turn (as the pre-check's look-ups: limitLedger.ts says why). The held reservations
 * are read after the locks are taken: every writer of a reservation holds its usage row's lock, so what this reads
 * stays true until the transaction ends.
 */
const LOCK_AND_READ = `
  SELECT row_kind, row_policy, row_cycle, row_key, row_nonce, row_amount
  FROM lock_limit_usage_and_read_held($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::numeric[])`;

type LockedRow = {
  row_kind: "usage" | "held";
  row_policy: string;
  row_cycle: string;
  /** The scope key of a usage row, the sender of a held reservation. */
  row_key: string;
  row_nonce: string | null;
  /** What a usage row has used, what a reservation holds. */
  row_amount: string;
};

/**
 * Reserves the limits of a batch of operations, each all or none, in order: the usage rows the batch touches are
 * created if missing and locked, so this is exact under any concurrency, on any number of instances sharing the
 * database. A repeated (sender, nonce) in the same cycle replaces its own reservation instead of adding to it.
 *
 * Set-based: one statement per batch, whatever its size (lock the usage rows, creating the missing ones first when
 * there are, and read what the batch's (sender, nonce) hold); the arithmetic runs here, on the locked rows, and what
 * it reserved is returned as writes for the statement that records the batch (sponsorships.ts). It is the
 * same as migration 4's `reserve_limits`, which ran four statements per reservation (and which an instance of an
 * earlier build may still call: both lock the same rows in the same order).
 *
 * Called only inside the transaction that records the operations (SponsorshipLog): a reservation exists if and only
 * if the record of its signature does, whenever the process stops. On PostgreSQL that transaction is the way of a
 * batch in which some operation no longer fits (LIMITS_IF_ALL_FIT below wrote nothing): it finds which, so that they
 * are refused with their reasons.
 */
export async function reserveLimits(
  tx: Queryable,
  operations: Reservation[][],
): Promise<{ outcomes: ReserveOutcome[]; writes: LimitWrites }> {
  const flat = operations.flat();
  const rows = await tx.query<LockedRow>(LOCK_AND_READ, [
    flat.map((r) => r.policyId),
    flat.map((r) => String(r.cycleStartMs)),
    flat.map((r) => r.scopeKey),
    flat.map((r) => r.sender),
    flat.map((r) => r.nonce.toString()),
  ]);
  const usage = new Map<string, bigint>();
  const held = new Map<string, bigint>();
  for (const row of rows) {
    if (row.row_kind === "usage")
      usage.set(usageKey(row.row_policy, row.row_cycle, row.row_key), BigInt(row.row_amount));
    else held.set(heldKey(row.row_policy, row.row_cycle, row.row_key, row.row_nonce as string), BigInt(row.row_amount));
  }
  const deltas = new Map<string, LimitWrites["usage"][number]>();
  const written = new Map<string, Reservation>();

  const outcomes = operations.map((reservations): ReserveOutcome => {
    const previous: (bigint | null)[] = [];
    for (const [index, r] of reservations.entries()) {
      const used = usage.get(usageKey(r.policyId, r.cycleStartMs, r.scopeKey)) ?? 0n;
      const prev = held.get(heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce)) ?? null;
      if (r.amount > r.threshold || used + r.amount - (prev ?? 0n) > r.threshold) return { ok: false, index, used };
      previous.push(prev);
    }
    for (const [i, r] of reservations.entries()) {
      const key = usageKey(r.policyId, r.cycleStartMs, r.scopeKey);
      const delta = r.amount - (previous[i] ?? 0n);
      usage.set(key, (usage.get(key) ?? 0n) + delta);
      const change = deltas.get(key);
      if (change) change.delta += delta;
      else deltas.set(key, { policyId: r.policyId, cycleStartMs: String(r.cycleStartMs), scopeKey: r.scopeKey, delta });
      const reservation = heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce);
      held.set(reservation, r.amount);
      written.set(reservation, r);
    }
    return { ok: true, previous };
  });
  return { outcomes, writes: { usage: [...deltas.values()], reservations: [...written.values()] } };
}

/** A usage row the common batch adds to, and the threshold its new usage must stay within. */
interface FittingUsage {
  policyId: string;
  cycleStartMs: number;
  scopeKey: string;
  delta: bigint;
  threshold: bigint;
}

/**
 * The common batch on PostgreSQL: no (sender, nonce) claimed twice in a limit's cycle, one threshold per usage row,
 * and every amount and every row's whole delta within its threshold. If none of its reservations exists yet (checked
 * by the statement), usage only grows along the batch, so every operation fits in turn exactly when each usage row
 * plus the batch's whole delta on it does: the two upserts of LIMITS_IF_ALL_FIT decide it. Anything else (a repeated
 * nonce, a threshold changed between two pre-checks, an amount over its limit) is undefined here and goes the
 * transaction's way, whose arithmetic covers every case.
 */
export interface FittingBatch {
  /** Sorted by key: the order in which the upsert locks the rows, the one settlement and reserveLimits lock them in. */
  usage: FittingUsage[];
  /** Sorted by key, so that two batches insert them in one order too. */
  reservations: Reservation[];
}

export function fittingBatch(operations: Reservation[][]): FittingBatch | undefined {
  const usage = new Map<string, FittingUsage>();
  const reservations = new Map<string, Reservation>();
  for (const r of operations.flat()) {
    const held = heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce);
    if (reservations.has(held) || r.amount > r.threshold) return undefined;
    reservations.set(held, r);
    const key = usageKey(r.policyId, r.cycleStartMs, r.scopeKey);
    const row = usage.get(key);
    if (!row) {
      const { policyId, cycleStartMs, scopeKey, amount, threshold } = r;
      usage.set(key, { policyId, cycleStartMs, scopeKey, delta: amount, threshold });
    } else if (row.threshold !== r.threshold) return undefined;
    else row.delta += r.amount;
  }
  const rows = [...usage.values()];
  if (rows.some((row) => row.delta > row.threshold)) return undefined;
  return {
    usage: rows.sort((a, b) => byCycle(a, b) || compare(a.scopeKey, b.scopeKey)),
    reservations: [...reservations.values()].sort(
      (a, b) => byCycle(a, b) || compare(a.sender, b.sender) || compare(a.nonce, b.nonce),
    ),
  };
}

const compare = <T extends string | bigint>(a: T, b: T) => (a < b ? -1 : a > b ? 1 : 0);

type InCycle = Pick<Reservation, "policyId" | "cycleStartMs">;

/** A limit's cycle first, as the database orders its keys (uuid, then bigint). */
const byCycle = (a: InCycle, b: InCycle) => compare(a.policyId, b.policyId) || a.cycleStartMs - b.cycleStartMs;

/**
 * The SQLSTATE of migration 33's limits_fit_or_fail: some usage row of the batch would have passed its threshold. The
 * statement is undone whole; the batch then goes the transaction's way.
 */
const LIMITS_NO_LONGER_FIT = "PM001";

/**
 * Whether `error` is LIMITS_IF_ALL_FIT refusing its batch (the statement undone whole, nothing written), which then
 * goes the transaction's way: a usage row would have passed its threshold, or one of its reservations existed.
 */
export function limitsNoLongerFit(error: unknown): boolean {
  if (error instanceof UniqueViolation) return error.constraint === "limit_reservations_pkey";
  return (error as { code?: string }).code === LIMITS_NO_LONGER_FIT;
}

/**
 * A FittingBatch reserved inside the statement that records it, as two common table expressions and the check that
 * ends the statement unless every row was written (`fits`, for the statement's SELECT). The usage upsert adds each
 * row's delta only where the result stays within its threshold, read on the row as it is once locked (an upsert
 * locks the latest version and judges its WHERE there), so another instance's batch committed meanwhile counts; a
 * missing row is created with the delta, if within. The reservations are inserted plainly: one that existed (it would
 * change the delta) fails the insert on its primary key, which ends the statement as a limit would (limitsNoLongerFit).
 * An upsert would check for a conflict before each row: about 40 thousand instructions more per operation with two
 * reservations. `first`: the number of the first parameter (`fittingParameters`) in the statement.
 */
export const LIMITS_IF_ALL_FIT = (first: number) => {
  const p = (i: number) => `$${first + i}`;
  return {
    ctes: `limit_usage_fitted AS (
    INSERT INTO limit_usage AS u (policy_id, cycle_start_ms, scope_key, used)
    SELECT k.policy_id, k.cycle_start_ms, k.scope_key, k.delta
    FROM unnest(${p(0)}::uuid[], ${p(1)}::bigint[], ${p(2)}::text[], ${p(3)}::numeric[], ${p(4)}::numeric[])
      AS k(policy_id, cycle_start_ms, scope_key, delta, threshold)
    WHERE k.delta <= k.threshold
    ON CONFLICT (policy_id, cycle_start_ms, scope_key) DO UPDATE SET used = u.used + EXCLUDED.used
    WHERE u.used + EXCLUDED.used
      <= (${p(4)}::numeric[])[array_position(${p(5)}::text[], u.policy_id::text || '|' || u.cycle_start_ms || '|' || u.scope_key)]
    RETURNING 1
  ), limit_reservations_fitted AS (
    INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
    SELECT * FROM unnest(${p(6)}::uuid[], ${p(7)}::bigint[], ${p(8)}::text[], ${p(9)}::numeric[], ${p(10)}::text[],
      ${p(11)}::numeric[], ${p(12)}::bigint[])
  )`,
    fits: `limits_fit_or_fail((SELECT count(*) FROM limit_usage_fitted) = cardinality(${p(0)}::uuid[]))`,
  };
};

/** The parameters of LIMITS_IF_ALL_FIT: the usage rows with their keys as usageKey writes them, then the reservations. */
export function fittingParameters(batch: FittingBatch): ArrayParameter[] {
  const { usage, reservations } = batch;
  return [
    usage.map((u) => u.policyId),
    usage.map((u) => String(u.cycleStartMs)),
    usage.map((u) => u.scopeKey),
    usage.map((u) => u.delta.toString()),
    usage.map((u) => u.threshold.toString()),
    usage.map((u) => usageKey(u.policyId, u.cycleStartMs, u.scopeKey)),
    reservations.map((r) => r.policyId),
    reservations.map((r) => String(r.cycleStartMs)),
    reservations.map((r) => r.sender),
    reservations.map((r) => r.nonce.toString()),
    reservations.map((r) => r.scopeKey),
    reservations.map((r) => r.amount.toString()),
    reservations.map((r) => String(r.validUntil)),
  ];
}
