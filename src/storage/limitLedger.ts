import type { BatchObserver } from "./batch";
import { Batcher } from "./batch";
import type { Database, Queryable } from "./database";
import { type MemoryLedger, memoryLedgerOf } from "./memoryLedger";

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

/** What the pre-check answers: whether the operation fits the usage as it is now. */
export type CheckOutcome = { ok: true } | { ok: false; index: number; used: bigint };

/**
 * Per reservation of the batch, flattened: its limit's usage now and the amount this (sender, nonce) holds. Each a
 * primary-key look-up: PostgreSQL keeps a named statement's generic plan, and for a join on the keys it chose to hash
 * the batch and scan the whole usage table, often updated and so full of dead rows (measured: 0.9 ms a batch at 1,000
 * senders, growing with the senders). OFFSET 0 keeps each look-up a subquery of its own, planned per key on the index.
 * The reservations are numbered by generate_subscripts, not read by unnest: a custom plan sees the length of the
 * arrays given to unnest, a generic one guesses 10, so batches of fewer than ten reservations were planned anew on
 * every call (pg_prepared_statements: custom plans only) for the same plan; generate_subscripts' guess is the same in
 * both, so the generic plan is kept.
 */
const CURRENT = `
  SELECT q.i AS i, COALESCE(u.used, 0)::text AS used, r.amount::text AS previous
  FROM generate_subscripts($1::uuid[], 1) AS q(i)
  LEFT JOIN LATERAL (
    SELECT used FROM limit_usage u
    WHERE u.policy_id = ($1::uuid[])[q.i] AND u.cycle_start_ms = ($2::bigint[])[q.i]
      AND u.scope_key = ($3::text[])[q.i]
    OFFSET 0) u ON true
  LEFT JOIN LATERAL (
    SELECT amount FROM limit_reservations r
    WHERE r.policy_id = ($1::uuid[])[q.i] AND r.cycle_start_ms = ($2::bigint[])[q.i]
      AND r.sender = ($4::text[])[q.i] AND r.nonce = ($5::numeric[])[q.i]
    OFFSET 0) r ON true
  ORDER BY q.i`;

/**
 * The spending-limit pre-check: whether an operation fits its limits as they are now, by the same arithmetic as
 * `reserveLimits`, reading only. It lets the rule refuse an operation that cannot fit before any call out (deposit
 * RPC, webhooks); the binding check is the reservation at record time. Concurrent checks share one statement; on the
 * embedded database they are answered from the memory ledger once it is built.
 */
export class LimitLedger {
  readonly #batcher: Batcher<Reservation[], CheckOutcome>;
  readonly #memory: MemoryLedger | undefined;

  constructor(db: Database, observe?: BatchObserver) {
    this.#memory = memoryLedgerOf(db);
    this.#batcher = new Batcher(
      async (operations) => {
        const flat = operations.flat();
        const rows = await db.query<{ i: number; used: string; previous: string | null }>(CURRENT, [
          flat.map((r) => r.policyId),
          flat.map((r) => String(r.cycleStartMs)),
          flat.map((r) => r.scopeKey),
          flat.map((r) => r.sender),
          flat.map((r) => r.nonce.toString()),
        ]);
        const current = new Map(rows.map((row) => [Number(row.i), row]));
        let position = 0;
        return operations.map((reservations) => {
          let outcome: CheckOutcome = { ok: true };
          for (const [index, r] of reservations.entries()) {
            const row = current.get(++position);
            const used = BigInt(row?.used ?? "0");
            const previous = row?.previous ? BigInt(row.previous) : 0n;
            if (outcome.ok && (r.amount > r.threshold || used + r.amount - previous > r.threshold)) {
              outcome = { ok: false, index, used };
            }
          }
          return outcome;
        });
      },
      undefined,
      observe,
    );
  }

  /** Whether all of one operation's limits have room for it now; reserves nothing. */
  check(reservations: Reservation[]): Promise<CheckOutcome> {
    // Embedded, once memory holds the usage: no statement at all.
    if (this.#memory?.current) return Promise.resolve(this.#memory.check(reservations));
    return this.#batcher.submit(reservations);
  }
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
