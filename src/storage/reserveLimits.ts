import type { Queryable } from "./database";
import type { Reservation, ReserveOutcome } from "./limitLedger";
import { heldKey, type LimitWrites, usageKey } from "./memoryLedger";

/** Creates the usage rows a batch needs, in one fixed order so concurrent batches never wait on each other in a cycle. */
const CREATE_USAGE = `
  INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
  SELECT DISTINCT policy_id, cycle_start_ms, scope_key, 0::numeric
  FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS k(policy_id, cycle_start_ms, scope_key)
  ORDER BY 1, 2, 3
  ON CONFLICT DO NOTHING`;

/**
 * Locks them in the same order (the order settlement locks them in too) and reads their usage: the keys sorted, then
 * each row looked up by primary key and locked in turn (as the pre-check's look-ups: limitLedger.ts says why). A
 * subquery that locks is never merged into its parent, so the look-ups run, and lock, in the keys' order.
 */
const LOCK_USAGE = `
  SELECT u.policy_id::text AS policy_id, u.cycle_start_ms::text AS cycle_start_ms, u.scope_key, u.used::text AS used
  FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::bigint[], $3::text[]) ORDER BY 1, 2, 3)
    AS k(policy_id, cycle_start_ms, scope_key)
  JOIN LATERAL (
    SELECT * FROM limit_usage u
    WHERE u.policy_id = k.policy_id AND u.cycle_start_ms = k.cycle_start_ms AND u.scope_key = k.scope_key
    FOR UPDATE) u ON true`;

/**
 * The reservations the batch's (sender, nonce) already hold. Read after the usage rows are locked: every writer of a
 * reservation holds its usage row's lock, so what this reads stays true until the transaction ends. A primary-key
 * look-up per key, as the pre-check's (limitLedger.ts says why).
 */
const HELD = `
  SELECT r.policy_id::text AS policy_id, r.cycle_start_ms::text AS cycle_start_ms, r.sender, r.nonce::text AS nonce,
    r.amount::text AS amount
  FROM (SELECT DISTINCT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::numeric[])) AS k(policy_id,
    cycle_start_ms, sender, nonce)
  JOIN LATERAL (
    SELECT * FROM limit_reservations r
    WHERE r.policy_id = k.policy_id AND r.cycle_start_ms = k.cycle_start_ms AND r.sender = k.sender
      AND r.nonce = k.nonce
    OFFSET 0) r ON true`;

type UsageRow = { policy_id: string; cycle_start_ms: string; scope_key: string; used: string };

/**
 * Reserves the limits of a batch of operations, each all or none, in order: the usage rows the batch touches are
 * created if missing and locked, so this is exact under any concurrency, on any number of instances sharing the
 * database. A repeated (sender, nonce) in the same cycle replaces its own reservation instead of adding to it.
 *
 * Set-based: two or three statements per batch, whatever its size (lock the usage rows, creating the missing ones
 * first when there are; read what the batch's (sender, nonce) hold); the arithmetic runs here, on the locked rows,
 * and what it reserved is returned as writes for the statement that records the batch (sponsorships.ts). It is the
 * same as migration 4's `reserve_limits`, which ran four statements per reservation (and which an instance of an
 * earlier build may still call: both lock the same rows in the same order).
 *
 * Called only inside the transaction that records the operations (SponsorshipLog): a reservation exists if and only
 * if the record of its signature does, whenever the process stops.
 */
export async function reserveLimits(
  tx: Queryable,
  operations: Reservation[][],
): Promise<{ outcomes: ReserveOutcome[]; writes: LimitWrites }> {
  const flat = operations.flat();
  const keys = [flat.map((r) => r.policyId), flat.map((r) => String(r.cycleStartMs)), flat.map((r) => r.scopeKey)];
  let usageRows = await tx.query<UsageRow>(LOCK_USAGE, keys);
  const distinct = new Set(flat.map((r) => usageKey(r.policyId, r.cycleStartMs, r.scopeKey)));
  if (usageRows.length < distinct.size) {
    // Some rows are new (a new cycle, a new sender): create them, then lock the whole set again in the fixed order.
    await tx.query(CREATE_USAGE, keys);
    usageRows = await tx.query<UsageRow>(LOCK_USAGE, keys);
  }
  const heldRows = await tx.query<{
    policy_id: string;
    cycle_start_ms: string;
    sender: string;
    nonce: string;
    amount: string;
  }>(HELD, [keys[0], keys[1], flat.map((r) => r.sender), flat.map((r) => r.nonce.toString())]);

  const usage = new Map(usageRows.map((u) => [usageKey(u.policy_id, u.cycle_start_ms, u.scope_key), BigInt(u.used)]));
  const held = new Map(
    heldRows.map((h) => [heldKey(h.policy_id, h.cycle_start_ms, h.sender, h.nonce), BigInt(h.amount)]),
  );
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
