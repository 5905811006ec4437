import type { BatchObserver } from "../metrics/metrics";
import { Batcher } from "./batch";
import type { Database, Queryable } from "./database";

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

export type ReserveOutcome =
  /** `previous`: per reservation, the amount it replaced (same sender and nonce in the cycle), or null. */
  | { ok: true; previous: (bigint | null)[] }
  /** `index`: the reservation that did not fit; `used`: its limit's usage. */
  | { ok: false; index: number; used: bigint };

type RawOutcome = { ok: true; previous: (string | null)[] } | { ok: false; index: number; used: string };

const toJson = (r: Reservation) => ({
  policyId: r.policyId,
  cycleStartMs: r.cycleStartMs,
  scopeKey: r.scopeKey,
  sender: r.sender,
  nonce: r.nonce.toString(),
  amount: r.amount.toString(),
  threshold: r.threshold.toString(),
  validUntil: r.validUntil,
});

const fromJson = (outcome: RawOutcome): ReserveOutcome =>
  outcome.ok
    ? { ok: true, previous: outcome.previous.map((p) => (p === null ? null : BigInt(p))) }
    : { ok: false, index: outcome.index, used: BigInt(outcome.used) };

/**
 * The spending-limit ledger. Check and reservation are one database statement (`reserve_limits`, migration 4) that
 * locks the usage rows it touches: exact under any concurrency, on any number of instances sharing the database.
 * Concurrent operations share that statement (group commit), so its cost is paid once per batch, not per request.
 * A repeated (sender, nonce) in the same cycle replaces its own reservation instead of adding to it.
 */
export class LimitLedger {
  readonly #batcher: Batcher<Reservation[], ReserveOutcome>;

  constructor(
    private readonly db: Database,
    observe?: BatchObserver,
  ) {
    this.#batcher = new Batcher(
      async (operations) => {
        const [row] = await db.query<{ results: RawOutcome[] }>("SELECT reserve_limits($1::jsonb) AS results", [
          JSON.stringify(operations.map((reservations) => reservations.map(toJson))),
        ]);
        return (row?.results ?? []).map(fromJson);
      },
      undefined,
      observe,
    );
  }

  /** Reserves all of one operation's limits, or none of them. */
  reserve(reservations: Reservation[]): Promise<ReserveOutcome> {
    return this.#batcher.submit(reservations);
  }

  /** Gives an operation's reservations back, restoring those they replaced. */
  release(reservations: Reservation[], previous: (bigint | null)[]): Promise<void> {
    return this.db.transaction(async (tx) => {
      for (const [i, reservation] of reservations.entries()) await unreserve(tx, reservation, previous[i] ?? null);
    });
  }
}

async function unreserve(db: Queryable, r: Reservation, previous: bigint | null): Promise<void> {
  const restore =
    previous === null
      ? "DELETE FROM limit_reservations WHERE policy_id = $1 AND cycle_start_ms = $2 AND sender = $4 AND nonce = $5::numeric"
      : "UPDATE limit_reservations SET amount = $7::numeric WHERE policy_id = $1 AND cycle_start_ms = $2 AND sender = $4 AND nonce = $5::numeric";
  await db.query(
    `WITH restored AS (${restore} RETURNING 1)
     UPDATE limit_usage SET used = GREATEST(used - $6::numeric, 0)
     WHERE policy_id = $1 AND cycle_start_ms = $2 AND scope_key = $3 AND EXISTS (SELECT 1 FROM restored)`,
    [
      r.policyId,
      r.cycleStartMs,
      r.scopeKey,
      r.sender,
      r.nonce.toString(),
      (r.amount - (previous ?? 0n)).toString(),
      // $7 appears only in the statement that restores a replaced reservation.
      ...(previous === null ? [] : [previous.toString()]),
    ],
  );
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
