import type { Database, Queryable } from "./database";
import type { CheckOutcome, Reservation, ReserveOutcome } from "./limitLedger";

export const usageKey = (policyId: string, cycleStartMs: number | string, scopeKey: string) =>
  `${policyId}|${cycleStartMs}|${scopeKey}`;
export const heldKey = (policyId: string, cycleStartMs: number | string, sender: string, nonce: bigint | string) =>
  `${policyId}|${cycleStartMs}|${sender}|${nonce}`;

/** What a batch's reservations write, as the parameters of RECORDS_AND_LIMITS (sponsorships.ts): usage deltas, then rows. */
export interface LimitWrites {
  usage: { policyId: string; cycleStartMs: string; scopeKey: string; delta: bigint }[];
  reservations: Reservation[];
}

export const NO_LIMIT_WRITES: LimitWrites = { usage: [], reservations: [] };

/** A batch's reservations computed from memory: the outcomes, what to write, and what to keep once it is written. */
export interface LimitPlan {
  outcomes: ReserveOutcome[];
  writes: LimitWrites;
  /** Call once the writes have committed. */
  commit(): void;
}

interface UsageRow {
  policy_id: string;
  cycle_start_ms: string;
  scope_key: string;
  used: string;
}
interface HeldRow {
  policy_id: string;
  cycle_start_ms: string;
  sender: string;
  nonce: string;
  amount: string;
}

const USAGE_COLUMNS =
  "policy_id::text AS policy_id, cycle_start_ms::text AS cycle_start_ms, scope_key, used::text AS used";
const HELD_COLUMNS = `policy_id::text AS policy_id, cycle_start_ms::text AS cycle_start_ms, sender, nonce::text AS nonce,
  amount::text AS amount`;

/**
 * The spending limits' usage and reservations in memory, for the embedded database: one process owns the data folder,
 * so no one else writes them. The database stays the record: each batch's reservations are written in the statement
 * that writes its sponsorship records (usage as deltas), and memory is built from the database when first needed after
 * a start.
 *
 * The record batches and settlement (the only other writer: it gives reservations back) run one at a time through
 * `exclusive`. Settlement marks what it touches as stale; the next record batch reads those keys again from the
 * database before it computes. A failed write clears memory: it is rebuilt from the database.
 */
export class MemoryLedger {
  #loaded = false;
  readonly #usage = new Map<string, bigint>();
  readonly #held = new Map<string, bigint>();
  readonly #staleUsage = new Map<string, [string, string, string]>();
  readonly #staleHeld = new Map<string, [string, string, string, string]>();
  #queue: Promise<unknown> = Promise.resolve();

  /** Whether the pre-check can be answered from memory: built, and nothing stale since the last batch. */
  get current(): boolean {
    return this.#loaded && this.#staleUsage.size === 0 && this.#staleHeld.size === 0;
  }

  /** The pre-check (the same arithmetic as the reservation), from memory; only when `current`. */
  check(reservations: Reservation[]): CheckOutcome {
    for (const [index, r] of reservations.entries()) {
      const used = this.#usage.get(usageKey(r.policyId, r.cycleStartMs, r.scopeKey)) ?? 0n;
      const previous = this.#held.get(heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce)) ?? 0n;
      if (r.amount > r.threshold || used + r.amount - previous > r.threshold) return { ok: false, index, used };
    }
    return { ok: true };
  }

  /** Called by settlement (inside `exclusive`), before it changes these usage rows and reservations. */
  markStale(
    targets: { policy_id: string; cycle_start_ms: string; scope_key: string; sender: string; nonce: string }[],
  ) {
    for (const t of targets) {
      this.#staleUsage.set(usageKey(t.policy_id, t.cycle_start_ms, t.scope_key), [
        t.policy_id,
        t.cycle_start_ms,
        t.scope_key,
      ]);
      this.#staleHeld.set(heldKey(t.policy_id, t.cycle_start_ms, t.sender, t.nonce), [
        t.policy_id,
        t.cycle_start_ms,
        t.sender,
        t.nonce,
      ]);
    }
  }

  /** Forgets everything: the next batch rebuilds memory from the database (after a failed transaction). */
  clear(): void {
    this.#loaded = false;
    this.#usage.clear();
    this.#held.clear();
    this.#staleUsage.clear();
    this.#staleHeld.clear();
  }

  async #refresh(tx: Queryable): Promise<void> {
    if (!this.#loaded) {
      this.#staleUsage.clear();
      this.#staleHeld.clear();
      for (const u of await tx.query<UsageRow>(`SELECT ${USAGE_COLUMNS} FROM limit_usage`)) {
        this.#usage.set(usageKey(u.policy_id, u.cycle_start_ms, u.scope_key), BigInt(u.used));
      }
      for (const h of await tx.query<HeldRow>(`SELECT ${HELD_COLUMNS} FROM limit_reservations`)) {
        this.#held.set(heldKey(h.policy_id, h.cycle_start_ms, h.sender, h.nonce), BigInt(h.amount));
      }
      this.#loaded = true;
      return;
    }
    if (this.#staleUsage.size > 0) {
      const keys = [...this.#staleUsage.values()];
      this.#staleUsage.clear();
      for (const [policyId, cycle, scope] of keys) this.#usage.delete(usageKey(policyId, cycle, scope));
      const rows = await tx.query<UsageRow>(
        `SELECT ${USAGE_COLUMNS} FROM limit_usage WHERE (policy_id, cycle_start_ms, scope_key) IN (
           SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[]))`,
        [0, 1, 2].map((i) => keys.map((k) => k[i])),
      );
      for (const u of rows) this.#usage.set(usageKey(u.policy_id, u.cycle_start_ms, u.scope_key), BigInt(u.used));
    }
    if (this.#staleHeld.size > 0) {
      const keys = [...this.#staleHeld.values()];
      this.#staleHeld.clear();
      for (const [policyId, cycle, sender, nonce] of keys) this.#held.delete(heldKey(policyId, cycle, sender, nonce));
      const rows = await tx.query<HeldRow>(
        `SELECT ${HELD_COLUMNS} FROM limit_reservations WHERE (policy_id, cycle_start_ms, sender, nonce) IN (
           SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::numeric[]))`,
        [0, 1, 2, 3].map((i) => keys.map((k) => k[i])),
      );
      for (const h of rows) {
        this.#held.set(heldKey(h.policy_id, h.cycle_start_ms, h.sender, h.nonce), BigInt(h.amount));
      }
    }
  }

  /**
   * Runs `work` alone among the callers of this method: the record batches and settlement's transactions. Memory is
   * read and the batch's statement runs inside it, so that nothing changes the limits in between.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Reads from the database what memory lacks (all of it after a start, the stale keys after settlement). */
  async prepare(db: Queryable): Promise<void> {
    await this.#refresh(db);
  }

  /**
   * Reserves a batch's limits, each operation all or none, in order, with the arithmetic of `reserveLimits`, on a copy:
   * memory changes only when the caller commits the plan, after its writes succeeded. Inside `exclusive`, after
   * `prepare`.
   */
  plan(operations: Reservation[][]): LimitPlan {
    const usage = new Map<string, bigint>();
    const held = new Map<string, bigint>();
    const deltas = new Map<string, LimitWrites["usage"][number]>();
    const written = new Map<string, Reservation>();
    const usedOf = (key: string) => usage.get(key) ?? this.#usage.get(key) ?? 0n;
    const heldOf = (key: string) => (held.has(key) ? (held.get(key) as bigint) : (this.#held.get(key) ?? null));

    const outcomes = operations.map((reservations): ReserveOutcome => {
      const previous: (bigint | null)[] = [];
      for (const [index, r] of reservations.entries()) {
        const used = usedOf(usageKey(r.policyId, r.cycleStartMs, r.scopeKey));
        const prev = heldOf(heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce));
        if (r.amount > r.threshold || used + r.amount - (prev ?? 0n) > r.threshold) return { ok: false, index, used };
        previous.push(prev);
      }
      for (const [i, r] of reservations.entries()) {
        const key = usageKey(r.policyId, r.cycleStartMs, r.scopeKey);
        const delta = r.amount - (previous[i] ?? 0n);
        usage.set(key, usedOf(key) + delta);
        const change = deltas.get(key);
        if (change) change.delta += delta;
        else
          deltas.set(key, { policyId: r.policyId, cycleStartMs: String(r.cycleStartMs), scopeKey: r.scopeKey, delta });
        const reservation = heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce);
        held.set(reservation, r.amount);
        written.set(reservation, r);
      }
      return { ok: true, previous };
    });
    return {
      outcomes,
      writes: { usage: [...deltas.values()], reservations: [...written.values()] },
      commit: () => {
        for (const [key, value] of usage) this.#usage.set(key, value);
        for (const [key, value] of held) this.#held.set(key, value);
      },
    };
  }
}

const ledgers = new WeakMap<Database, MemoryLedger>();

/**
 * The memory ledger of an embedded database (one per database object, shared by the record log, the pre-check and
 * settlement); none for PostgreSQL, where other instances write the same rows.
 */
export function memoryLedgerOf(db: Database): MemoryLedger | undefined {
  if (db.kind !== "pglite") return undefined;
  let ledger = ledgers.get(db);
  if (!ledger) {
    ledger = new MemoryLedger();
    ledgers.set(db, ledger);
  }
  return ledger;
}
