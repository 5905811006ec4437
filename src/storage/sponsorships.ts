import { randomUUID } from "node:crypto";
import { AnalyzeOnGrowth } from "./analyzeOnGrowth";
import type { BatchObserver } from "./batch";
import { Batcher } from "./batch";
import type { Database, Queryable } from "./database";
import { queueDeliveriesOf } from "./eventOutbox";
import type { Reservation, ReserveOutcome } from "./limitLedger";
import { type LimitWrites, type MemoryLedger, memoryLedgerOf, NO_LIMIT_WRITES } from "./memoryLedger";
import { type ArrayParameter, pglitePreparedOf } from "./pglitePrepared";
import { fittingBatch, fittingParameters, LIMITS_IF_ALL_FIT, limitsNoLongerFit, reserveLimits } from "./reserveLimits";

/** One answer of the sponsorship endpoint, sponsored or refused, with the outcome of every rule evaluated. */
export interface SponsorshipRecord {
  paymasterId: string;
  chainId: number;
  sender: string;
  nonce: bigint;
  sponsored: boolean;
  reason?: string;
  userOpHash?: string;
  callGasLimit?: bigint;
  verificationGasLimit?: bigint;
  preVerificationGas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  validUntil?: number;
  validAfter?: number;
  ruleOutcomes: unknown[];
  /** The on-chain paymasterId whose deposit pays (the funding wallet when the answer was given), lowercase. */
  fundingAddress?: string;
  /** The chain's verifying paymaster contract the signature is for, lowercase. */
  paymasterAddress?: string;
  /**
   * For a sponsored operation on a chain whose deposit is checked: the most it can cost the deposit. It is held
   * against the deposit (deposit_holds) until the operation is settled or released.
   */
  maxCharge?: bigint;
  /**
   * Dollars per whole native token, as a decimal text, when a USD rule read the price for this answer: the price its
   * USD amounts were computed at, which settlement uses again for the actual cost.
   */
  nativeUsdPrice?: string;
  /** The EntryPoint the operation was signed for, lowercase. */
  entryPoint?: string;
  /** SPONSORED: the dApp's deposit pays; ERC20: the sender pays in a token. */
  mode?: LedgerMode;
  /** For a sponsored operation: the most it can cost in wei (its prefund), on every chain. */
  worstCaseWei?: bigint;
  /**
   * The L1 data fee's part of preVerificationGas, in gas, where the service estimated the operation's gas on a chain
   * with an L1 fee (0 on a chain without one); absent when the gas was signed as the client sent it.
   */
  l1DataGas?: bigint;
}

export type LedgerMode = "SPONSORED" | "ERC20";

/**
 * sponsorship.signed (docs/events.md) for each sponsored row whose paymaster has an event endpoint subscribed to it,
 * queued to every such endpoint that is enabled: in the records' statement, so the event exists exactly when its record
 * does. The event's time is the batch's by the service clock ($25, one element), else the database's.
 */
const SIGNED_EVENTS = `signed_events AS (
    INSERT INTO events (paymaster_id, chain_id, type, data, at_ms)
    SELECT i.paymaster_id, i.chain_id, 'sponsorship.signed',
      jsonb_build_object('paymasterId', i.paymaster_id, 'chainId', i.chain_id, 'userOpHash', i.user_op_hash,
        'sender', i.sender, 'nonce', i.nonce::text, 'entryPoint', i.entry_point, 'mode', i.mode,
        'maxCostWei', i.worst_case_wei::text, 'heldWei', i.max_charge::text, 'paymasterAddress', i.paymaster_address,
        'validAfter', i.valid_after, 'validUntil', i.valid_until,
        'tokenCharge', (SELECT jsonb_build_object('feeToken', o->>'feeToken', 'symbol', o->>'symbol',
            'maxTokenCost', o->>'maxTokenCost', 'exchangeRate', o->>'exchangeRate', 'priceMarkup', o->'priceMarkup')
          FROM jsonb_array_elements(i.rule_outcomes) AS o WHERE i.mode = 'ERC20' AND o->>'rule' = 'ERC20' LIMIT 1)),
      COALESCE(($25::text[])[1]::bigint, (extract(epoch FROM now()) * 1000)::bigint)
    FROM inserted i
    WHERE i.sponsored AND EXISTS (SELECT 1 FROM event_endpoints e
      WHERE e.paymaster_id = i.paymaster_id AND 'sponsorship.signed' = ANY (e.events))
    ORDER BY i.id
    RETURNING id, paymaster_id, type
  ), signed_deliveries AS (${queueDeliveriesOf("signed_events")})`;

/** The batch's rows ($1 to $24), inserted when `gate` lets them (a WHERE clause, or nothing). */
const insertedRows = (gate: string) => `inserted AS (
    INSERT INTO sponsorships (id, paymaster_id, chain_id, sender, nonce, sponsored, reason, user_op_hash, call_gas_limit,
      verification_gas_limit, pre_verification_gas, max_fee_per_gas, max_priority_fee_per_gas, valid_until, valid_after,
      rule_outcomes, funding_address, paymaster_address, max_charge, native_usd_price, entry_point, mode, worst_case_wei,
      l1_data_gas)
    SELECT id::uuid, paymaster_id::uuid, chain_id::bigint, sender, nonce::numeric, sponsored::boolean, reason,
      user_op_hash, cgl::numeric, vgl::numeric, pvg::numeric, mfpg::numeric, mpfpg::numeric, valid_until::bigint,
      valid_after::bigint, outcomes::jsonb, funding_address, paymaster_address, max_charge::numeric,
      native_usd_price::numeric, entry_point, mode, worst_case::numeric, l1_data_gas::numeric
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
      $18::text[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[], $24::text[])
      AS t(id, paymaster_id, chain_id, sender, nonce, sponsored, reason, user_op_hash, cgl, vgl, pvg, mfpg, mpfpg,
        valid_until, valid_after, outcomes, funding_address, paymaster_address, max_charge, native_usd_price,
        entry_point, mode, worst_case, l1_data_gas)
    ${gate}
    RETURNING id, paymaster_id, chain_id, sender, nonce, user_op_hash, entry_point, mode, worst_case_wei, paymaster_address,
      funding_address, valid_until, valid_after, max_charge, sponsored, rule_outcomes
  )`;

/**
 * What the sponsored rows add to their deposit's holds (deposit_holds, by the minute their validity ends; keys in a
 * fixed order, so that concurrent statements lock them alike).
 */
const HOLDS = `INSERT INTO deposit_holds (chain_id, paymaster_address, funding_address, valid_until_minute, held)
  SELECT chain_id, paymaster_address, funding_address, (valid_until + 59) / 60 * 60, SUM(max_charge)
  FROM inserted
  WHERE sponsored AND max_charge IS NOT NULL AND paymaster_address IS NOT NULL AND funding_address IS NOT NULL
    AND valid_until IS NOT NULL
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (chain_id, paymaster_address, funding_address, valid_until_minute)
  DO UPDATE SET held = deposit_holds.held + EXCLUDED.held`;

/**
 * The rows, and in the same statement what the sponsored ones add to their deposit's holds and the
 * sponsorship.signed events they make. Alone, the statement is its own transaction: all of it is written or none.
 */
const RECORDS = `
  WITH ${insertedRows("")}, ${SIGNED_EVENTS}
  ${HOLDS}`;

/**
 * PostgreSQL, a batch with spending limits (a FittingBatch), as one statement sent outside any transaction (so it is
 * its own): the limits reserved ($26 on, reserveLimits.ts), the records, their holds and their events, and the check
 * that ends the statement, undoing all of it, unless every usage row and reservation was written.
 */
const LIMITS = LIMITS_IF_ALL_FIT(26);
const RECORDS_IF_LIMITS_FIT = `
  WITH ${LIMITS.ctes}, ${insertedRows("")}, ${SIGNED_EVENTS}, holds AS (${HOLDS})
  SELECT ${LIMITS.fits}`;

/**
 * The same, with the spending-limit reservations the batch made ($26 on: usage increases, then reservations, then
 * with `lowered` the usage decreases): computed in memory on the embedded database; on PostgreSQL, on the rows locked
 * in this transaction, when RECORDS_IF_LIMITS_FIT could not take the batch (not a common one, or a limit full). A
 * batch without them uses
 * RECORDS: PGlite plans every statement anew, and the two more inserts cost it even when empty. A usage that goes down
 * (a repeated nonce at a lower amount: its row exists) is an update apart, because an insert's proposed row must pass
 * the CHECK (used >= 0) even when it conflicts; rare, so only the statements that need it carry it.
 */
const recordsAndLimits = (lowered: boolean) => `
  WITH limit_usage_written AS (
    INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used)
    SELECT * FROM unnest($26::uuid[], $27::bigint[], $28::text[], $29::numeric[])
    ON CONFLICT (policy_id, cycle_start_ms, scope_key) DO UPDATE SET used = limit_usage.used + EXCLUDED.used
  ), ${
    lowered
      ? `limit_usage_lowered AS (
    UPDATE limit_usage u SET used = u.used + d.delta
    FROM unnest($37::uuid[], $38::bigint[], $39::text[], $40::numeric[]) AS d(policy_id, cycle_start_ms, scope_key, delta)
    WHERE u.policy_id = d.policy_id AND u.cycle_start_ms = d.cycle_start_ms AND u.scope_key = d.scope_key
  ), `
      : ""
  }limit_reservations_written AS (
    INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
    SELECT * FROM unnest($30::uuid[], $31::bigint[], $32::text[], $33::numeric[], $34::text[], $35::numeric[],
      $36::bigint[])
    ON CONFLICT (policy_id, cycle_start_ms, sender, nonce)
    DO UPDATE SET amount = EXCLUDED.amount, valid_until = EXCLUDED.valid_until
  ), ${RECORDS.trim().slice("WITH ".length)}`;

const RECORDS_AND_LIMITS = recordsAndLimits(false);
const RECORDS_AND_LOWERED_LIMITS = recordsAndLimits(true);

const text = (value: bigint | number | string | undefined) => (value === undefined ? null : String(value));

function columns(rows: SponsorshipRecord[]): ArrayParameter[] {
  return [
    rows.map(() => randomUUID()),
    rows.map((r) => r.paymasterId),
    rows.map((r) => String(r.chainId)),
    rows.map((r) => r.sender),
    rows.map((r) => r.nonce.toString()),
    rows.map((r) => String(r.sponsored)),
    rows.map((r) => r.reason ?? null),
    rows.map((r) => r.userOpHash ?? null),
    rows.map((r) => text(r.callGasLimit)),
    rows.map((r) => text(r.verificationGasLimit)),
    rows.map((r) => text(r.preVerificationGas)),
    rows.map((r) => text(r.maxFeePerGas)),
    rows.map((r) => text(r.maxPriorityFeePerGas)),
    rows.map((r) => text(r.validUntil)),
    rows.map((r) => text(r.validAfter)),
    rows.map((r) => JSON.stringify(r.ruleOutcomes)),
    rows.map((r) => r.fundingAddress?.toLowerCase() ?? null),
    rows.map((r) => r.paymasterAddress?.toLowerCase() ?? null),
    rows.map((r) => text(r.maxCharge)),
    rows.map((r) => r.nativeUsdPrice ?? null),
    rows.map((r) => r.entryPoint?.toLowerCase() ?? null),
    rows.map((r) => r.mode ?? null),
    rows.map((r) => text(r.worstCaseWei)),
    rows.map((r) => text(r.l1DataGas)),
  ];
}

/** The parameters of `recordsAndLimits`: usage increases, reservations, then the decreases when there are. */
function limitColumns(limits: LimitWrites): ArrayParameter[] {
  const usageColumns = (usage: LimitWrites["usage"]) => [
    usage.map((u) => u.policyId),
    usage.map((u) => u.cycleStartMs),
    usage.map((u) => u.scopeKey),
    usage.map((u) => u.delta.toString()),
  ];
  const lowered = limits.usage.filter((u) => u.delta < 0n);
  return [
    ...usageColumns(limits.usage.filter((u) => u.delta >= 0n)),
    limits.reservations.map((r) => r.policyId),
    limits.reservations.map((r) => String(r.cycleStartMs)),
    limits.reservations.map((r) => r.sender),
    limits.reservations.map((r) => r.nonce.toString()),
    limits.reservations.map((r) => r.scopeKey),
    limits.reservations.map((r) => r.amount.toString()),
    limits.reservations.map((r) => String(r.validUntil)),
    ...(lowered.length > 0 ? usageColumns(lowered) : []),
  ];
}

/**
 * The spending-limit reservations a sponsored operation needs, bound to its record: they are made in the transaction
 * that writes the record, or the operation is recorded as refused.
 */
export interface LimitClaim {
  /** The rule whose outcome a refusal at record time adds. */
  rule: string;
  reservations: Reservation[];
  /** The refusal's words when reservation `index` does not fit a usage of `used`. */
  refusal(index: number, used: bigint): string;
}

/**
 * `ok`: recorded as submitted. Otherwise a sponsored operation whose limits filled meanwhile, recorded as refused with
 * `reason`.
 */
export type RecordOutcome = { ok: true } | { ok: false; reason: string };

interface Pending {
  record: SponsorshipRecord;
  claim?: LimitClaim;
}

/** PostgreSQL's deadlock_detected: the whole transaction was rolled back, so it can simply run again. */
const DEADLOCK = "40P01";
const DEADLOCK_RETRIES = 3;

/**
 * Records sponsorships in group commits; `record` resolves once the row is durable. The rows of a batch, what they
 * add to deposit_holds and the spending-limit reservations of its sponsored operations are one transaction: a crash
 * leaves all of them or none, so no reservation can outlive the record of its signature.
 */
export class SponsorshipLog {
  readonly #insert: Batcher<Pending, RecordOutcome>;

  /** `now`: the service's clock, the time of the events a batch makes; absent (tests of the ledger alone): the database's. */
  constructor(db: Database, observe?: BatchObserver, now?: () => number) {
    const batchTime = (): ArrayParameter => [now ? String(now()) : null];
    // Embedded: the limits are kept in memory and written by the records' statement (PostgreSQL: reserved in the
    // database, in the records' transaction).
    const memory = memoryLedgerOf(db);
    // One process owns the embedded database: its records' statements are planned once (pglitePrepared.ts).
    const prepared = memory ? pglitePreparedOf(db) : undefined;
    const write: WriteBatch | undefined = prepared && ((sql, params) => prepared.run(sql, params));
    const statistics = new AnalyzeOnGrowth(db, "sponsorships");
    this.#insert = new Batcher(
      async (items) => {
        if (memory && write) {
          const outcomes = await memory.exclusive(() => recordWithMemory(db, write, items, memory, batchTime()));
          statistics.wrote(items.length);
          return outcomes;
        }
        for (let attempt = 1; ; attempt++) {
          try {
            // Without limits to reserve, the one statement is the whole transaction.
            if (!items.some((item) => item.claim)) return await recordBatch(queryWith(db), items, batchTime(), []);
            const claimed = items.flatMap((item) => (item.claim ? [item.claim.reservations] : []));
            // With them, one statement too when every operation fits (no BEGIN, no COMMIT, one round trip).
            if (await recordIfAllFit(db, items, batchTime(), claimed)) return items.map(() => ({ ok: true }));
            // Some limit filled since its pre-check, or the batch repeats a nonce (both rare); nothing was written. The
            // transaction finds which operations fit and records the others as refused, with their reasons.
            return await db.transaction(async (tx) => {
              const { outcomes, writes } = await reserveLimits(tx, claimed);
              return recordBatch(queryWith(tx), items, batchTime(), outcomes, writes);
            });
          } catch (error) {
            if ((error as { code?: string }).code !== DEADLOCK || attempt >= DEADLOCK_RETRIES) throw error;
          }
        }
      },
      undefined,
      observe,
    );
  }

  /**
   * Records an answer. With a `claim`, the sponsored operation's limits are reserved in the same transaction; if they
   * no longer fit (other operations took the room since the rule's pre-check), it is recorded as refused instead,
   * and the signature must not be given out.
   */
  record(record: SponsorshipRecord, claim?: LimitClaim): Promise<RecordOutcome> {
    return this.#insert.submit(
      claim && record.sponsored && claim.reservations.length > 0 ? { record, claim } : { record },
    );
  }
}

/** Runs a batch's one statement. */
type WriteBatch = (sql: string, params: ArrayParameter[]) => Promise<unknown>;

/** A batch's statement as an ordinary parameterised query (PostgreSQL names and plans it once per connection). */
const queryWith =
  (db: Queryable): WriteBatch =>
  (sql, params) =>
    db.query(sql, params as unknown[]);

/**
 * PostgreSQL: the batch and its limits in one statement, written only when every claimed operation fits. False:
 * nothing was written, because the batch is not a common one or because some limit filled since its pre-check.
 */
async function recordIfAllFit(
  db: Queryable,
  items: Pending[],
  at: ArrayParameter,
  claimed: Reservation[][],
): Promise<boolean> {
  const batch = fittingBatch(claimed);
  if (!batch) return false;
  try {
    await db.query(RECORDS_IF_LIMITS_FIT, [
      ...columns(items.map((item) => item.record)),
      at,
      ...fittingParameters(batch),
    ]);
    return true;
  } catch (error) {
    if (limitsNoLongerFit(error)) return false;
    throw error;
  }
}

/** The embedded database: reservations from memory, written by the records' statement; memory kept once written. */
async function recordWithMemory(
  db: Database,
  write: WriteBatch,
  items: Pending[],
  memory: MemoryLedger,
  at: ArrayParameter,
): Promise<RecordOutcome[]> {
  try {
    const claimed = items.flatMap((item) => (item.claim ? [item.claim.reservations] : []));
    if (claimed.length === 0) return await recordBatch(write, items, at, []);
    await memory.prepare(db);
    const plan = memory.plan(claimed);
    const outcomes = await recordBatch(write, items, at, plan.outcomes, plan.writes);
    plan.commit();
    return outcomes;
  } catch (error) {
    // Memory may be ahead of what was written, or half read: rebuild it from the database.
    memory.clear();
    throw error;
  }
}

/**
 * Writes a batch in one statement: `reserved` gives, per claimed item in order, whether its limits fit; one that did
 * not is recorded as refused.
 */
async function recordBatch(
  write: WriteBatch,
  items: Pending[],
  at: ArrayParameter,
  reserved: ReserveOutcome[],
  limits: LimitWrites = NO_LIMIT_WRITES,
): Promise<RecordOutcome[]> {
  const claimed = items.flatMap((item, position) => (item.claim ? [{ position, claim: item.claim }] : []));
  const outcomes: RecordOutcome[] = items.map(() => ({ ok: true }));
  const rows = items.map((item) => item.record);
  for (const [i, { position, claim }] of claimed.entries()) {
    const outcome = reserved[i];
    if (!outcome || outcome.ok) continue;
    const reason = claim.refusal(outcome.index, outcome.used);
    outcomes[position] = { ok: false, reason };
    rows[position] = refusedAtRecord(rows[position] as SponsorshipRecord, claim.rule, reason);
  }
  if (limits.reservations.length === 0) await write(RECORDS, [...columns(rows), at]);
  else {
    const statement = limits.usage.some((u) => u.delta < 0n) ? RECORDS_AND_LOWERED_LIMITS : RECORDS_AND_LIMITS;
    await write(statement, [...columns(rows), at, ...limitColumns(limits)]);
  }
  return outcomes;
}

/**
 * The record of an operation the rules passed but whose limits were full at record time: a refusal like any other
 * (no hash, no validity, nothing held, no worst case), with the rules' outcomes and the limit's refusal after them.
 */
function refusedAtRecord(record: SponsorshipRecord, rule: string, reason: string): SponsorshipRecord {
  const { userOpHash, validUntil, validAfter, maxCharge, worstCaseWei, l1DataGas, ...rest } = record;
  return {
    ...rest,
    sponsored: false,
    reason,
    ruleOutcomes: [...record.ruleOutcomes, { rule, passed: false, reason }],
  };
}

export interface StoredSponsorship {
  sender: string;
  nonce: string;
  sponsored: boolean;
  reason: string | null;
  user_op_hash: string | null;
  valid_until: string | number | null;
  valid_after: string | number | null;
  call_gas_limit: string | null;
  rule_outcomes: { rule: string; passed: boolean; reason?: string }[];
  /** The native token price a USD rule used (dollars per whole token), or null. */
  native_usd_price: string | null;
}

export async function listSponsorships(db: Queryable, paymasterId: string): Promise<StoredSponsorship[]> {
  return db.query<StoredSponsorship>(
    `SELECT sender, nonce::text AS nonce, sponsored, reason, user_op_hash, valid_until, valid_after,
       call_gas_limit::text AS call_gas_limit, rule_outcomes, native_usd_price::text AS native_usd_price
     FROM sponsorships WHERE paymaster_id = $1 ORDER BY created_at, id`,
    [paymasterId],
  );
}
