import type { BatchObserver } from "./batch";
import { Batcher } from "./batch";
import type { Database, Queryable } from "./database";
import { type MemoryLedger, memoryLedgerOf, usageKey } from "./memoryLedger";

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
 * How long a usage read by the pre-check may stand in for the database: other instances write meanwhile. Five seconds,
 * not one: a per-sender limit is fresh only for a sender who asked within the window, and at a few requests a second
 * per sender one second left many batches with a sender to read (the bench's count at 10 connections: 0.192 pre-check
 * statements per sponsorship with one second, 0.044 with five). What others add in the window can only move a refusal
 * from here to the record.
 */
const RECENT_MS = 5000;

/**
 * The usage each limit had when the pre-check last read it (and less than RECENT_MS ago), plus what the checks since
 * let through here. Only an operation far below every one of its limits is answered from it: its usage so counted,
 * plus its amount, at most half the threshold. So a limit near full is always read afresh, and its refusal keeps its
 * exact words; a usage that others raised meanwhile can only let an operation through that no longer fits, which the
 * reservation at record time refuses (the pre-check is advisory, the record binding).
 */
interface RecentRead {
  used: bigint;
  atMs: number;
}

class RecentUsage {
  /** By usage key, in the order read: the oldest first, so expired ones are dropped from the front. */
  readonly #read = new Map<string, RecentRead>();

  constructor(private readonly now: () => number) {}

  /** Whether every reservation is far below its limit in the usage read lately; counts them in if so. */
  passes(reservations: Reservation[]): boolean {
    const since = this.now() - RECENT_MS;
    const entries: RecentRead[] = [];
    for (const r of reservations) {
      const entry = this.#read.get(usageKey(r.policyId, r.cycleStartMs, r.scopeKey));
      if (entry === undefined || entry.atMs <= since || 2n * (entry.used + r.amount) > r.threshold) return false;
      entries.push(entry);
    }
    // Counted in through the entries just found, not by building each key again.
    for (const [i, entry] of entries.entries()) entry.used += (reservations[i] as Reservation).amount;
    return true;
  }

  /** The usage just read from the database. */
  read(r: Reservation, used: bigint, atMs: number): void {
    const key = usageKey(r.policyId, r.cycleStartMs, r.scopeKey);
    this.#read.delete(key);
    this.#read.set(key, { used, atMs });
  }

  /** An operation let through: its amounts counted as used (ignoring what a repeated nonce held: more, not less). */
  count(reservations: Reservation[]): void {
    for (const r of reservations) {
      const entry = this.#read.get(usageKey(r.policyId, r.cycleStartMs, r.scopeKey));
      if (entry) entry.used += r.amount;
    }
  }

  /** Drops what is too old to be used, so the map holds only the limits read in the last RECENT_MS. */
  expire(): void {
    const since = this.now() - RECENT_MS;
    for (const [key, entry] of this.#read) {
      if (entry.atMs > since) break;
      this.#read.delete(key);
    }
  }
}

/**
 * The spending-limit pre-check: whether an operation fits its limits as they are now, by the same arithmetic as
 * `reserveLimits`, reading only. It lets the rule refuse an operation that cannot fit before any call out (deposit
 * RPC, webhooks); the binding check is the reservation at record time. Concurrent checks share one statement; on the
 * embedded database they are answered from the memory ledger once it is built; an operation far below its limits as
 * read within the last five seconds is answered without a statement (RecentUsage).
 */
export class LimitLedger {
  readonly #batcher: Batcher<Reservation[], CheckOutcome>;
  readonly #memory: MemoryLedger | undefined;
  readonly #recent: RecentUsage;

  /** `now`: the service's clock, which the recent reads are aged by (a test's own ages them without waiting). */
  constructor(db: Database, observe: BatchObserver | undefined, now: () => number) {
    this.#memory = memoryLedgerOf(db);
    const recent = new RecentUsage(now);
    this.#recent = recent;
    this.#batcher = new Batcher(
      async (operations) => {
        const flat = operations.flat();
        // Aged from before the statement: what it reads may be older than its answer.
        const readAtMs = now();
        const rows = await db.query<{ i: number; used: string; previous: string | null }>(CURRENT, [
          flat.map((r) => r.policyId),
          flat.map((r) => String(r.cycleStartMs)),
          flat.map((r) => r.scopeKey),
          flat.map((r) => r.sender),
          flat.map((r) => r.nonce.toString()),
        ]);
        const current = new Map(rows.map((row) => [Number(row.i), row]));
        recent.expire();
        // Every usage as read, before the operations that pass are counted in (several may share a limit).
        for (const [i, r] of flat.entries()) recent.read(r, BigInt(current.get(i + 1)?.used ?? "0"), readAtMs);
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
          if (outcome.ok) recent.count(reservations);
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
    if (this.#recent.passes(reservations)) return Promise.resolve({ ok: true });
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
