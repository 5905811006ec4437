import type { Database, Queryable } from "./database";
import { queueEvents } from "./eventOutbox";
import { type MemoryLedger, memoryLedgerOf } from "./memoryLedger";
import {
  EVENT_COLUMNS,
  expiryEvents,
  type IncludedForEvents,
  inclusionEvents,
  type ReleasedForEvents,
} from "./settlementEvents";

/** How far settlement has read a chain. */
export interface ChainCursor {
  lastBlock: bigint;
  /** Block 0's hash when the cursor was written: another hash means another chain under the same id (a new node). */
  genesisHash: string;
}

export async function readCursor(db: Queryable, chainId: number): Promise<ChainCursor | undefined> {
  const [row] = await db.query<{ last_block: string; genesis_hash: string }>(
    "SELECT last_block::text AS last_block, genesis_hash FROM chain_cursors WHERE chain_id = $1",
    [chainId],
  );
  return row ? { lastBlock: BigInt(row.last_block), genesisHash: row.genesis_hash } : undefined;
}

/**
 * The cursor of a chain, created at `startAfter` if there is none, and moved back to it if the chain's genesis changed
 * (a local node started afresh: the blocks the cursor counted no longer exist). Several instances may race here: the
 * statements are idempotent.
 */
export async function openCursor(
  db: Queryable,
  chainId: number,
  genesisHash: string,
  startAfter: bigint,
): Promise<{ cursor: ChainCursor; reset: boolean }> {
  await db.query(
    "INSERT INTO chain_cursors (chain_id, last_block, genesis_hash) VALUES ($1, $2, $3) ON CONFLICT (chain_id) DO NOTHING",
    [chainId, startAfter.toString(), genesisHash],
  );
  const reset = await db.query(
    `UPDATE chain_cursors SET last_block = $2, genesis_hash = $3, updated_at = now()
     WHERE chain_id = $1 AND genesis_hash <> $3 RETURNING 1`,
    [chainId, startAfter.toString(), genesisHash],
  );
  const cursor = await readCursor(db, chainId);
  if (!cursor) throw new Error(`chain ${chainId}: the settlement cursor vanished`);
  return { cursor, reset: reset.length > 0 };
}

/** One UserOperationEvent of our paymaster. */
export interface OperationEvent {
  userOpHash: string;
  sender: string;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  txHash: string;
  blockNumber: bigint;
  /** Why the execution reverted (the EntryPoint's UserOperationRevertReason), when it did. */
  revertReason?: string;
  /**
   * ERC20 mode: what our token paymaster charged the sender (its TokenCharged), and what the up-front token paymaster
   * refunded of the maximum it took in validation (absent from the approve-in-batch one, which takes no more).
   */
  tokenCharge?: { feeToken: string; amount: bigint; exchangeRate: bigint; refund?: bigint };
  /**
   * ERC20 mode: why the approve-in-batch token paymaster's charge failed (TokenChargeFailed, or PostOpRevertReason
   * from v0.7 on).
   */
  tokenChargeFailure?: string;
  /**
   * ERC20 mode: why the up-front token paymaster's postOp reverted (PostOpRevertReason), worded as a refund that
   * failed. Its prefund stays with it, so the row is settled as charged its maximum token cost, refunded nothing.
   */
  refundFailure?: string;
}

export interface RangeOutcome {
  /** False when the cursor was no longer where this range starts (another instance got there first): nothing done. */
  applied: boolean;
  /** Sponsorship rows settled. */
  settled: number;
  /** Other signatures of the same sender and nonce, released: they can never run. */
  superseded: number;
  /** Spending-limit reservations moved from their worst case to the actual cost. */
  reservations: number;
}

export interface SettleRangeOptions {
  chainId: number;
  fromBlock: bigint;
  toBlock: bigint;
  events: OperationEvent[];
  /** The service clock (ms) for settled_at. */
  atMs: number;
  /**
   * Seconds between a sponsorship's signing time and its validAfter (CLOCK_SKEW_SECONDS): the signing time tells which
   * spending-limit cycle its reservation is in.
   */
  validAfterSkewSeconds: number;
}

/**
 * Settles the events of blocks fromBlock..toBlock and moves the cursor to toBlock, in one transaction: after a crash
 * either both happened or neither, so a restart resumes exactly. A range processed twice changes nothing the second
 * time (only unsettled rows are settled).
 *
 * Per event: the sponsorship rows with its userOpHash get the actual cost, gas, success and transaction, and in ERC20
 * mode the token charge and refund (TokenCharged's; where the up-front token paymaster's refund failed, the maximum
 * token cost the record signed, which is the prefund the contract took unless an oracle price moved between the
 * signature and the block, and 0); other
 * unsettled signatures of the same sender and nonce on the chain are released; and each spending-limit reservation
 * the operation holds (its paymaster's policies, its sender and nonce, in the cycle it was signed in) is replaced by
 * the actual cost: NATIVE_ASSET usage drops by worst case − actual cost, USD by the same in dollars at the answer's
 * price, COUNT keeps its 1. The reservation row goes
 * away, so a later signature of the same nonce (which can never run) reserves afresh and is released on expiry.
 */
export function settleRange(db: Database, options: SettleRangeOptions): Promise<RangeOutcome> {
  return exclusiveOfLedger(db, () => settleRangeAlone(db, options));
}

async function settleRangeAlone(db: Database, options: SettleRangeOptions): Promise<RangeOutcome> {
  const { chainId, events } = options;
  const at = new Date(options.atMs).toISOString();
  return db.transaction(async (tx) => {
    const [cursor] = await tx.query<{ last_block: string }>(
      "SELECT last_block::text AS last_block FROM chain_cursors WHERE chain_id = $1 FOR UPDATE",
      [chainId],
    );
    if (!cursor || BigInt(cursor.last_block) !== options.fromBlock - 1n) {
      return { applied: false, settled: 0, superseded: 0, reservations: 0 };
    }
    let settled: SettledRow[] = [];
    let superseded = 0;
    let reservations = 0;
    if (events.length > 0) {
      settled = await tx.query<SettledRow>(
        `UPDATE sponsorships s SET actual_cost = e.cost::numeric, actual_gas_used = e.gas::numeric,
           success = e.success::boolean, tx_hash = e.tx, block_number = e.block::bigint, settled_at = $7::timestamptz,
           token_charge = CASE WHEN e.kept::boolean THEN ${erc20Outcome("(o->>'maxTokenCost')::numeric")}
             ELSE e.charge::numeric END,
           token_refund = CASE WHEN e.kept::boolean THEN ${erc20Outcome("CASE WHEN o ? 'maxTokenCost' THEN 0 END")}
             ELSE e.refund::numeric END
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $9::text[], $10::text[],
             $11::text[])
           AS e(hash, cost, gas, success, tx, block, charge, refund, kept)
         WHERE s.chain_id = $8 AND s.user_op_hash = e.hash AND s.sponsored AND s.settled_at IS NULL
         RETURNING s.paymaster_id, s.sender, s.nonce::text AS nonce, s.valid_after::text AS valid_after,
           e.cost AS actual_cost, s.native_usd_price::text AS native_usd_price, ${HOLD_COLUMNS},
           s.released_at IS NOT NULL AS was_released, ${EVENT_COLUMNS}, s.token_charge::text AS token_charge,
           CASE WHEN e.kept::boolean
             THEN ${erc20Outcome("jsonb_build_object('feeToken', o->>'feeToken', 'exchangeRate', o->>'exchangeRate')")}
           END AS kept_outcome`,
        [
          events.map((e) => e.userOpHash.toLowerCase()),
          events.map((e) => e.actualGasCost.toString()),
          events.map((e) => e.actualGasUsed.toString()),
          events.map((e) => String(e.success)),
          events.map((e) => e.txHash.toLowerCase()),
          events.map((e) => e.blockNumber.toString()),
          at,
          chainId,
          events.map((e) => e.tokenCharge?.amount.toString() ?? null),
          events.map((e) => (e.tokenCharge ? (e.tokenCharge.refund ?? 0n).toString() : null)),
          events.map((e) => String(e.refundFailure !== undefined)),
        ],
      );
      const released = await tx.query<HoldRow & ReleasedForEvents>(
        `UPDATE sponsorships s SET released_at = $3::timestamptz
         FROM unnest($1::text[], $2::numeric[]) AS e(sender, nonce)
         WHERE s.chain_id = $4 AND s.sender = e.sender AND s.nonce = e.nonce
           AND s.sponsored AND s.settled_at IS NULL AND s.released_at IS NULL
         RETURNING ${HOLD_COLUMNS}, ${EVENT_COLUMNS}`,
        [events.map((e) => e.sender.toLowerCase()), events.map((e) => e.nonce.toString()), at, chainId],
      );
      superseded = released.length;
      // A row released earlier (mined after its expiry was assumed) no longer holds anything.
      await takeFromHolds(tx, [...settled.filter((row) => !row.was_released), ...released]);
      reservations = await settleReservations(tx, settled, options.validAfterSkewSeconds, memoryLedgerOf(db));
      // The dApps' events, with what they report: the outbox row commits with the settlement or not at all.
      await queueEvents(
        tx,
        [...inclusionEvents(settled, events), ...expiryEvents(released, "superseded")],
        options.atMs,
      );
    }
    await tx.query("UPDATE chain_cursors SET last_block = $2, updated_at = now() WHERE chain_id = $1", [
      chainId,
      options.toBlock.toString(),
    ]);
    return { applied: true, settled: settled.length, superseded, reservations };
  });
}

/**
 * One value of a settled row's ERC20 mode outcome (`o`, the ERC20 rule's among its rule outcomes), as a subquery: null
 * for a row without one. Read only for the up-front token paymaster's kept prefunds, which are rare.
 */
const erc20Outcome = (value: string) =>
  `(SELECT ${value} FROM jsonb_array_elements(s.rule_outcomes) AS o
    WHERE s.mode = 'ERC20' AND o->>'rule' = 'ERC20' LIMIT 1)`;

interface SettledRow extends HoldRow, ReleasedForEvents, IncludedForEvents {
  paymaster_id: string;
  sender: string;
  nonce: string;
  valid_after: string | null;
  actual_cost: string;
  /** Dollars per whole native token the answer's USD rules used; null when none did. */
  native_usd_price: string | null;
  was_released: boolean;
}

/** What a sponsorship holds against its deposit in deposit_holds (migration 6). */
interface HoldRow {
  chain_id: string;
  paymaster_address: string | null;
  funding_address: string | null;
  valid_until: string | null;
  max_charge: string | null;
}

const HOLD_COLUMNS =
  "s.chain_id::text AS chain_id, s.paymaster_address, s.funding_address, s.valid_until::text AS valid_until, " +
  "s.max_charge::text AS max_charge";

/**
 * Takes what settled or released sponsorships held off their deposits' holds, summed per row of deposit_holds, which
 * are locked first in key order (as the record's upsert adds to them), so that the two never deadlock.
 */
async function takeFromHolds(tx: Queryable, rows: HoldRow[]): Promise<void> {
  const sums = new Map<string, { key: [string, string, string, string]; amount: bigint }>();
  for (const row of rows) {
    if (!row.paymaster_address || !row.funding_address || row.valid_until === null || row.max_charge === null) continue;
    const minute = ((BigInt(row.valid_until) + 59n) / 60n) * 60n;
    const key: [string, string, string, string] = [
      row.chain_id,
      row.paymaster_address,
      row.funding_address,
      minute.toString(),
    ];
    const id = key.join(":");
    const sum = sums.get(id);
    if (sum) sum.amount += BigInt(row.max_charge);
    else sums.set(id, { key, amount: BigInt(row.max_charge) });
  }
  if (sums.size === 0) return;
  const entries = [...sums.values()];
  const params = [0, 1, 2, 3].map((i) => entries.map((e) => e.key[i]));
  await tx.query(
    `SELECT 1 FROM deposit_holds
     WHERE (chain_id, paymaster_address, funding_address, valid_until_minute) IN (
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[]))
     ORDER BY chain_id, paymaster_address, funding_address, valid_until_minute
     FOR UPDATE`,
    params,
  );
  await tx.query(
    `UPDATE deposit_holds h SET held = GREATEST(h.held - d.amount, 0)
     FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::numeric[])
       AS d(chain_id, paymaster_address, funding_address, valid_until_minute, amount)
     WHERE h.chain_id = d.chain_id AND h.paymaster_address = d.paymaster_address
       AND h.funding_address = d.funding_address AND h.valid_until_minute = d.valid_until_minute`,
    [...params, entries.map((e) => e.amount.toString())],
  );
}

/**
 * The reservations settled operations hold: per policy of their paymaster, the latest cycle begun by signing time.
 * A USD limit counts the actual cost at the price the answer was given at (its record's), rounded up to a whole USD
 * unit (10^-18 dollar) as the reservation was; without a recorded price (the limit became USD after the signature)
 * the reservation is kept as it is.
 */
const SETTLED_RESERVATIONS = `
  WITH s AS (
    SELECT DISTINCT * FROM unnest($1::uuid[], $2::text[], $3::numeric[], $4::bigint[], $5::numeric[], $6::numeric[])
      AS s(paymaster_id, sender, nonce, signed_by_ms, actual, price)
  )
  SELECT DISTINCT ON (r.policy_id, r.sender, r.nonce)
    r.policy_id, r.cycle_start_ms::text AS cycle_start_ms, r.sender, r.nonce::text AS nonce, r.scope_key,
    (CASE p.policy_data->>'thresholdType'
      WHEN 'NATIVE_ASSET' THEN s.actual
      WHEN 'USD' THEN COALESCE(CEIL(s.actual * s.price), r.amount)
      ELSE 1 END)::text AS final
  FROM s
  JOIN policies p ON p.paymaster_id = s.paymaster_id
  JOIN limit_reservations r ON r.policy_id = p.id AND r.sender = s.sender AND r.nonce = s.nonce
    AND r.cycle_start_ms <= s.signed_by_ms
  ORDER BY r.policy_id, r.sender, r.nonce, r.cycle_start_ms DESC`;

async function settleReservations(
  tx: Queryable,
  settled: SettledRow[],
  skewSeconds: number,
  memory: MemoryLedger | undefined,
): Promise<number> {
  // Rows of one operation (the same signature recorded twice) settle its reservations once.
  const operations = new Map<string, SettledRow>();
  for (const row of settled) operations.set(`${row.paymaster_id}:${row.sender}:${row.nonce}`, row);
  const rows = [...operations.values()].filter((row) => row.valid_after !== null);
  if (rows.length === 0) return 0;
  const targets = await tx.query<Target>(SETTLED_RESERVATIONS, [
    rows.map((r) => r.paymaster_id),
    rows.map((r) => r.sender.toLowerCase()),
    rows.map((r) => r.nonce),
    // validAfter is the signing second less the skew; any millisecond of that second.
    rows.map((r) => String((BigInt(r.valid_after as string) + BigInt(skewSeconds) + 1n) * 1000n - 1n)),
    rows.map((r) => r.actual_cost),
    rows.map((r) => r.native_usd_price),
  ]);
  return finishReservations(tx, targets, memory);
}

interface Target {
  policy_id: string;
  cycle_start_ms: string;
  sender: string;
  nonce: string;
  scope_key: string;
  /** What the reservation finally counts in its limit's usage: the actual cost, 1 for COUNT, 0 when released. */
  final: string;
}

/**
 * Replaces reservations by their final amount in their limit's usage and deletes them. The usage rows are locked
 * first, in the order reserve_limits locks them, so the two never wait on each other in a cycle; the amount subtracted
 * is the one the delete returns, so a concurrent change of the reservation or a second run cannot count twice.
 */
async function finishReservations(tx: Queryable, targets: Target[], memory: MemoryLedger | undefined): Promise<number> {
  if (targets.length === 0) return 0;
  // The embedded memory ledger reads these again before its next batch (settlement runs alone: exclusiveOfLedger).
  memory?.markStale(targets);
  await tx.query(
    `SELECT 1 FROM limit_usage u
     WHERE (u.policy_id, u.cycle_start_ms, u.scope_key) IN (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[]))
     ORDER BY u.policy_id, u.cycle_start_ms, u.scope_key
     FOR UPDATE`,
    [targets.map((t) => t.policy_id), targets.map((t) => t.cycle_start_ms), targets.map((t) => t.scope_key)],
  );
  const removed = await tx.query(
    `WITH t AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::numeric[], $5::numeric[])
         AS t(policy_id, cycle_start_ms, sender, nonce, final)
     ), removed AS (
       DELETE FROM limit_reservations r USING t
       WHERE r.policy_id = t.policy_id AND r.cycle_start_ms = t.cycle_start_ms AND r.sender = t.sender
         AND r.nonce = t.nonce
       RETURNING r.policy_id, r.cycle_start_ms, r.scope_key, t.final - r.amount AS delta
     ), delta AS (
       SELECT policy_id, cycle_start_ms, scope_key, SUM(delta) AS delta, COUNT(*) AS n
       FROM removed GROUP BY policy_id, cycle_start_ms, scope_key
     ), updated AS (
       UPDATE limit_usage u SET used = GREATEST(u.used + delta.delta, 0)
       FROM delta
       WHERE u.policy_id = delta.policy_id AND u.cycle_start_ms = delta.cycle_start_ms AND u.scope_key = delta.scope_key
       RETURNING 1
     )
     SELECT COALESCE(SUM(n), 0)::int AS n FROM delta`,
    [
      targets.map((t) => t.policy_id),
      targets.map((t) => t.cycle_start_ms),
      targets.map((t) => t.sender),
      targets.map((t) => t.nonce),
      targets.map((t) => t.final),
    ],
  );
  return Number((removed[0] as { n: number } | undefined)?.n ?? 0);
}

export interface ReleaseOutcome {
  sponsorships: number;
  reservations: number;
}

/**
 * Releases what expired without being mined on a chain that settlement has read up to `cutoff` (unix seconds, margin
 * already taken off): sponsorships with validUntil before it that are not settled are marked released, and the
 * spending-limit reservations of that chain's paymasters that expired are given back whole (NATIVE_ASSET by their
 * amount, COUNT by 1) — unless a later signature of the same sender and nonce, still valid, may yet run.
 */
export function releaseExpired(
  db: Database,
  options: { chainId: number; cutoff: number; atMs: number },
): Promise<ReleaseOutcome> {
  return exclusiveOfLedger(db, () => releaseExpiredAlone(db, options));
}

async function releaseExpiredAlone(
  db: Database,
  options: { chainId: number; cutoff: number; atMs: number },
): Promise<ReleaseOutcome> {
  const { chainId, cutoff } = options;
  return db.transaction(async (tx) => {
    const targets = await tx.query<Target>(
      `SELECT r.policy_id, r.cycle_start_ms::text AS cycle_start_ms, r.sender, r.nonce::text AS nonce, r.scope_key,
         '0' AS final
       FROM limit_reservations r
       JOIN policies p ON p.id = r.policy_id
       JOIN paymasters pm ON pm.id = p.paymaster_id
       WHERE pm.chain_id = $1 AND r.valid_until < $2
         AND NOT EXISTS (
           SELECT 1 FROM sponsorships s
           WHERE s.chain_id = $1 AND s.paymaster_id = p.paymaster_id AND s.sender = r.sender AND s.nonce = r.nonce
             AND s.sponsored AND s.settled_at IS NULL AND s.released_at IS NULL AND s.valid_until >= $2)
       ORDER BY r.policy_id, r.cycle_start_ms, r.sender, r.nonce
       LIMIT 5000`,
      [chainId, cutoff],
    );
    const reservations = await finishReservations(tx, targets, memoryLedgerOf(db));
    const released = await tx.query<HoldRow & ReleasedForEvents>(
      `UPDATE sponsorships s SET released_at = $3::timestamptz
       WHERE s.chain_id = $1 AND s.sponsored AND s.settled_at IS NULL AND s.released_at IS NULL AND s.valid_until < $2
       RETURNING ${HOLD_COLUMNS}, ${EVENT_COLUMNS}`,
      [chainId, cutoff, new Date(options.atMs).toISOString()],
    );
    await takeFromHolds(tx, released);
    await queueEvents(tx, expiryEvents(released, "expired"), options.atMs);
    // Every sponsorship of these minutes is released by now: their rows can only hold zero.
    await tx.query("DELETE FROM deposit_holds WHERE chain_id = $1 AND valid_until_minute < $2", [chainId, cutoff]);
    return { sponsorships: released.length, reservations };
  });
}

/**
 * Runs a settlement transaction alone among the record batches of the embedded database's memory ledger, which
 * settlement's changes to the limits would otherwise pass unseen between its read and its write.
 */
function exclusiveOfLedger<T>(db: Database, work: () => Promise<T>): Promise<T> {
  const memory = memoryLedgerOf(db);
  return memory ? memory.exclusive(work) : work();
}
