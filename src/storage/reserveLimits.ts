import type { Queryable } from "./database";
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
 * batch in which some operation no longer fits (`reserveIfAllFit` below answered false): it finds which, so that they
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

/**
 * The same reservation inside the statement that records the batch (migration 30's function): it locks the rows as
 * `reserveLimits` does, and writes the batch's usage and reservations only when every operation fits, answering
 * whether it did. `first`: the number of its first parameter in that statement; the parameters are `fitParameters`.
 */
export const reserveIfAllFit = (first: number) => {
  const types = ["uuid", "bigint", "text", "text", "numeric", "numeric", "numeric", "bigint", "int"];
  return `reserve_limits_if_all_fit(${types.map((type, i) => `$${first + i}::${type}[]`).join(", ")})`;
};

/** Per reservation of the claimed operations, flattened in order: its fields, then its operation's number. */
export function fitParameters(operations: Reservation[][]): ArrayParameter[] {
  const flat = operations.flat();
  return [
    flat.map((r) => r.policyId),
    flat.map((r) => String(r.cycleStartMs)),
    flat.map((r) => r.scopeKey),
    flat.map((r) => r.sender),
    flat.map((r) => r.nonce.toString()),
    flat.map((r) => r.amount.toString()),
    flat.map((r) => r.threshold.toString()),
    flat.map((r) => String(r.validUntil)),
    operations.flatMap((reservations, op) => reservations.map(() => String(op))),
  ];
}
