import type { Database, Queryable } from "./database";
import { CREATED_MICROS, keyOfRow, keyParams, type PageKey } from "./pageKey";

/**
 * The sponsorship ledger of one paymaster, read: pages newest first and counts per time bucket. A row's status is
 * derived, never stored, from what the record and settlement wrote and from the service clock:
 * - refused: the service did not sign (`sponsored` false);
 * - mined: settlement found its UserOperationEvent (`settled_at`); this wins over a release, since an operation mined
 *   after its expiry was assumed is settled all the same;
 * - expired: released by settlement (expired unmined, or another signature of its sender and nonce was mined), or its
 *   validUntil is before the clock's second, though settlement has not released it yet;
 * - pending: signed, validUntil not passed, neither settled nor released.
 */
export type LedgerStatus = "pending" | "mined" | "expired" | "refused";

/** The parameter number the clock's second takes in the predicates below. */
type Param = (value: unknown) => string;

function statusPredicate(status: LedgerStatus, now: string): string {
  switch (status) {
    case "refused":
      return "NOT sponsored";
    case "mined":
      return "sponsored AND settled_at IS NOT NULL";
    case "expired":
      return `sponsored AND settled_at IS NULL AND (released_at IS NOT NULL OR valid_until < ${now})`;
    case "pending":
      return `sponsored AND settled_at IS NULL AND released_at IS NULL AND (valid_until IS NULL OR valid_until >= ${now})`;
  }
}

const statusOf = (now: string) =>
  `CASE WHEN NOT sponsored THEN 'refused' WHEN settled_at IS NOT NULL THEN 'mined'
     WHEN released_at IS NOT NULL OR valid_until < ${now} THEN 'expired' ELSE 'pending' END`;

/**
 * Rows written before the mode column (migration 14) have it null: their first rule outcome tells, since ERC20 mode
 * records exactly one, named ERC20. COALESCE reads the JSON only for those rows.
 */
const MODE = "COALESCE(mode, CASE WHEN rule_outcomes->0->>'rule' = 'ERC20' THEN 'ERC20' ELSE 'SPONSORED' END)";

/** The worst case: its own column since migration 14, else the deposit's hold where one was kept. */
const WORST_CASE = "COALESCE(worst_case_wei, max_charge)";

export interface LedgerFilter {
  paymasterId: string;
  /** The service clock, in whole seconds: validUntil before it means expired. */
  nowSeconds: number;
  status?: LedgerStatus;
  /** Lowercase. */
  sender?: string;
  /** Creation time, ms: from included, to excluded. */
  fromMs?: number;
  toMs?: number;
}

export interface LedgerRow {
  userOpHash: string | null;
  sender: string;
  nonce: string;
  chainId: number;
  entryPoint: string | null;
  mode: "SPONSORED" | "ERC20";
  status: LedgerStatus;
  reason: string | null;
  worstCaseWei: string | null;
  /** The L1 data fee's part of preVerificationGas (gas) where the service estimated it; null otherwise. */
  l1DataGas: string | null;
  actualWei: string | null;
  transactionHash: string | null;
  createdAt: number;
  settledAt: number | null;
  /**
   * Only on a row that recorded the native token price (a USD rule read it at signing): that price, and its figures
   * at it in USD units (10^-18 dollar), each rounded up as USD limits count them.
   */
  usd?: { price: string; worstCaseUnits: bigint | null; actualUnits: bigint | null };
  /**
   * ERC20 mode's signed rows: the fee token, and in its base units the most the operation can be charged, then once
   * mined what the sender paid and what the up-front token paymaster refunded of the maximum it took (0 from the
   * approve-in-batch one; null until mined).
   */
  token?: TokenAmounts;
}

export interface TokenAmounts {
  feeToken: string;
  symbol: string | null;
  /** Absent on rows signed before the decimals were recorded. */
  decimals: number | null;
  maxCharge: string | null;
  charge: string | null;
  refund: string | null;
}

interface StoredRow {
  id: string;
  created_micros: string;
  user_op_hash: string | null;
  sender: string;
  nonce: string;
  chain_id: string | number;
  entry_point: string | null;
  mode: "SPONSORED" | "ERC20";
  status: LedgerStatus;
  reason: string | null;
  worst_case: string | null;
  l1_data_gas: string | null;
  actual_cost: string | null;
  tx_hash: string | null;
  settled_micros: string | null;
  native_usd_price: string | null;
  worst_case_usd: string | null;
  actual_usd: string | null;
  token_outcome: { feeToken?: string; symbol?: string; decimals?: number; maxTokenCost?: string } | null;
  token_charge: string | null;
  token_refund: string | null;
}

/** ERC20 mode's outcome among a row's rules: the token, its symbol and decimals, and the maximum charge signed. */
const TOKEN_OUTCOME = `(SELECT o FROM jsonb_array_elements(rule_outcomes) AS o
  WHERE mode = 'ERC20' AND o->>'rule' = 'ERC20' LIMIT 1)`;

/** The WHERE of a filter, its parameters appended through `param`. */
function whereOf(filter: LedgerFilter, param: Param, now: string): string {
  const conditions = [`paymaster_id = ${param(filter.paymasterId)}::uuid`];
  if (filter.sender !== undefined) conditions.push(`sender = ${param(filter.sender)}`);
  if (filter.fromMs !== undefined) {
    conditions.push(`created_at >= ${param(new Date(filter.fromMs).toISOString())}::timestamptz`);
  }
  if (filter.toMs !== undefined) {
    conditions.push(`created_at < ${param(new Date(filter.toMs).toISOString())}::timestamptz`);
  }
  if (filter.status !== undefined) conditions.push(`(${statusPredicate(filter.status, now)})`);
  return conditions.join(" AND ");
}

function parameters(): { values: unknown[]; param: Param } {
  const values: unknown[] = [];
  return {
    values,
    param: (value) => {
      values.push(value);
      return `$${values.length}`;
    },
  };
}

/**
 * Up to `limit` rows newest first (created_at, then id, both descending), after `before` when given. The order is the
 * one of sponsorships_ledger (or of sponsorships_ledger_by_sender with a sender), so PostgreSQL walks the index from
 * the key and stops once the page is full; the status is a filter on the rows walked.
 */
export async function ledgerPage(
  db: Queryable,
  filter: LedgerFilter,
  limit: number,
  before?: PageKey,
): Promise<{ row: LedgerRow; key: PageKey }[]> {
  const { values, param } = parameters();
  const now = `${param(filter.nowSeconds)}::bigint`;
  let where = whereOf(filter, param, now);
  if (before) {
    const [instant, id] = keyParams(before);
    where += ` AND (created_at, id) < (${param(instant)}::timestamptz, ${param(id)}::uuid)`;
  }
  const rows = await db.query<StoredRow>(
    `SELECT id, ${CREATED_MICROS}, user_op_hash, sender, nonce::text AS nonce, chain_id, entry_point,
       ${MODE} AS mode, ${statusOf(now)} AS status, reason, ${WORST_CASE}::text AS worst_case,
       l1_data_gas::text AS l1_data_gas, actual_cost::text AS actual_cost, tx_hash, native_usd_price::text AS native_usd_price,
       ceil(${WORST_CASE} * native_usd_price)::text AS worst_case_usd, ceil(actual_cost * native_usd_price)::text AS actual_usd,
       (extract(epoch FROM COALESCE(settled_at, released_at)) * 1000000)::bigint::text AS settled_micros,
       ${TOKEN_OUTCOME} AS token_outcome, token_charge::text AS token_charge, token_refund::text AS token_refund
     FROM sponsorships WHERE ${where}
     ORDER BY created_at DESC, id DESC LIMIT ${param(limit)}`,
    values,
  );
  return rows.map((stored) => ({ row: rowOf(stored), key: keyOfRow(stored) }));
}

const millisOf = (micros: string) => Number(BigInt(micros) / 1000n);

function rowOf(stored: StoredRow): LedgerRow {
  const mined = stored.status === "mined";
  return {
    userOpHash: stored.user_op_hash,
    sender: stored.sender,
    nonce: stored.nonce,
    chainId: Number(stored.chain_id),
    entryPoint: stored.entry_point,
    mode: stored.mode,
    status: stored.status,
    reason: stored.reason,
    worstCaseWei: stored.worst_case,
    l1DataGas: stored.l1_data_gas,
    actualWei: mined ? stored.actual_cost : null,
    transactionHash: mined ? stored.tx_hash : null,
    createdAt: millisOf(stored.created_micros),
    // Pending rows and refusals have no outcome yet; an expired row has one once settlement released it.
    settledAt: stored.settled_micros === null || stored.status === "refused" ? null : millisOf(stored.settled_micros),
    ...(stored.native_usd_price === null
      ? {}
      : {
          usd: {
            price: stored.native_usd_price,
            worstCaseUnits: stored.worst_case_usd === null ? null : BigInt(stored.worst_case_usd),
            actualUnits: mined && stored.actual_usd !== null ? BigInt(stored.actual_usd) : null,
          },
        }),
    ...(stored.token_outcome?.feeToken === undefined
      ? {}
      : {
          token: {
            feeToken: stored.token_outcome.feeToken,
            symbol: stored.token_outcome.symbol ?? null,
            decimals: stored.token_outcome.decimals ?? null,
            maxCharge: stored.token_outcome.maxTokenCost ?? null,
            charge: mined ? stored.token_charge : null,
            refund: mined ? stored.token_refund : null,
          },
        }),
  };
}

export interface LedgerBucket {
  /** The bucket's first instant, ms since the epoch (UTC). */
  startMs: number;
  counts: Record<LedgerStatus, number>;
  /** What mined SPONSORED operations cost the dApp's deposit (their actual gas cost). */
  spendWei: bigint;
  /** The worst case of pending SPONSORED operations: what they may still cost. */
  heldWei: bigint;
  /** In USD units (10^-18 dollar), when a price was asked for: see ledgerBuckets. */
  usd?: {
    spendUnits: bigint;
    heldUnits: bigint;
    /** Rows of spendWei or heldWei with no recorded price, left out of the USD sums since no current price was given. */
    unpriced: number;
  };
}

interface StoredBucket {
  bucket: string;
  pending: string | number;
  mined: string | number;
  expired: string | number;
  refused: string | number;
  spend_wei: string;
  held_wei: string;
  spend_usd?: string;
  held_usd?: string;
  unpriced?: string | number;
}

/**
 * Counts and spend per bucket of `bucketMs` (an hour or a day: whole multiples of it from the epoch, in UTC) over
 * [fromMs, toMs), which the caller aligns to buckets: one row per bucket, empty ones included. Each bucket aggregates
 * its own range of the ledger's index, in index order: grouping the whole range at once made PostgreSQL sort its rows
 * (85,000 for 30 days at 1,000,000 rows, on disk) to group them.
 *
 * With `usdPrice` (dollars per native token as a decimal text, or null when the chain's price cannot be read now), the
 * spend and hold are also summed in USD units: each row at the price it recorded when a USD rule read one at signing,
 * otherwise at `usdPrice`; each row rounded up to a whole unit, as USD limits count it. numeric arithmetic, so exact.
 * A null `usdPrice` leaves rows without a recorded price out of the sums, and counts them in `unpriced`.
 */
export async function ledgerBuckets(
  db: Database,
  filter: { paymasterId: string; nowSeconds: number; fromMs: number; toMs: number },
  bucketMs: number,
  usdPrice?: string | null,
): Promise<LedgerBucket[]> {
  const { values, param } = parameters();
  const now = `${param(filter.nowSeconds)}::bigint`;
  const paymaster = `${param(filter.paymasterId)}::uuid`;
  // In milliseconds, so the interval is a fixed length: a '1 day' interval would follow the session's time zone.
  const size = `${param(`${bucketMs} milliseconds`)}::interval`;
  const from = `${param(new Date(filter.fromMs).toISOString())}::timestamptz`;
  const to = `${param(new Date(filter.toMs).toISOString())}::timestamptz`;
  const sponsoredMode = `${MODE} = 'SPONSORED'`;
  const minedSponsored = `${statusPredicate("mined", now)} AND ${sponsoredMode}`;
  const pendingSponsored = `${statusPredicate("pending", now)} AND ${sponsoredMode}`;
  let usdColumns = "";
  if (usdPrice !== undefined) {
    const price = `COALESCE(native_usd_price, ${param(usdPrice)}::numeric)`;
    usdColumns = `,
         COALESCE(sum(ceil(actual_cost * ${price})) FILTER (WHERE ${minedSponsored}), 0)::text AS spend_usd,
         COALESCE(sum(ceil(${WORST_CASE} * ${price})) FILTER (WHERE ${pendingSponsored}), 0)::text AS held_usd,
         count(*) FILTER (WHERE native_usd_price IS NULL AND ${price} IS NULL
           AND ((${minedSponsored}) OR (${pendingSponsored}))) AS unpriced`;
  }
  // The planner cannot know the series' length and prices the query as if it were 1,000 buckets: past jit_above_cost
  // at a million rows, where PostgreSQL then spent a second compiling a query that runs in 100 ms. Off for it alone.
  const rows = await db.transaction(async (tx) => {
    await tx.query("SET LOCAL jit = off");
    return tx.query<StoredBucket>(
      `SELECT (extract(epoch FROM b.start) * 1000)::bigint::text AS bucket, s.*
     FROM generate_series(${from}, ${to} - ${size}, ${size}) AS b(start)
     CROSS JOIN LATERAL (
       SELECT count(*) FILTER (WHERE ${statusPredicate("pending", now)}) AS pending,
         count(*) FILTER (WHERE ${statusPredicate("mined", now)}) AS mined,
         count(*) FILTER (WHERE ${statusPredicate("expired", now)}) AS expired,
         count(*) FILTER (WHERE ${statusPredicate("refused", now)}) AS refused,
         COALESCE(sum(actual_cost) FILTER (WHERE ${minedSponsored}), 0)::text AS spend_wei,
         COALESCE(sum(${WORST_CASE}) FILTER (WHERE ${pendingSponsored}), 0)::text AS held_wei${usdColumns}
       FROM sponsorships
       WHERE paymaster_id = ${paymaster} AND created_at >= b.start AND created_at < b.start + ${size}
     ) AS s
     ORDER BY b.start`,
      values,
    );
  });
  return rows.map((row) => ({
    startMs: Number(row.bucket),
    counts: {
      pending: Number(row.pending),
      mined: Number(row.mined),
      expired: Number(row.expired),
      refused: Number(row.refused),
    },
    spendWei: BigInt(row.spend_wei),
    heldWei: BigInt(row.held_wei),
    ...(row.spend_usd !== undefined
      ? {
          usd: {
            spendUnits: BigInt(row.spend_usd),
            heldUnits: BigInt(row.held_usd ?? "0"),
            unpriced: Number(row.unpriced ?? 0),
          },
        }
      : {}),
  }));
}

export interface LedgerSize {
  /** Rows: counted up to COUNTED_ROWS, beyond that the planner's estimate (estimatedRows). */
  rows: number;
  /** Bytes on disk, indexes included. */
  bytes: number;
}

/** Below this estimate the rows are counted: a few milliseconds at most, and exact where an estimate is stale. */
const COUNTED_ROWS = 100_000;

/**
 * A table's rows as the planner estimates them: the rows per page the last analysis saw (reltuples / relpages) times
 * the pages the table has now, so the estimate follows the table's growth between analyses; the last analysis's
 * reltuples alone when it saw no page. Negative when the table was never analyzed.
 */
export async function estimatedRows(db: Queryable, table: string): Promise<number> {
  const [row] = await db.query<{ estimate: string | number | null }>(
    `SELECT (CASE WHEN relpages > 0 AND reltuples >= 0
               THEN reltuples / relpages * (pg_relation_size(oid) / current_setting('block_size')::int)
               ELSE reltuples END)::bigint::text AS estimate
     FROM pg_class WHERE oid = to_regclass($1)`,
    [table],
  );
  return Number(row?.estimate ?? -1);
}

/**
 * The ledger's size for the metrics: catalogue reads, never a count of a large table. The estimate starts from the
 * last analysis (autovacuum on PostgreSQL, src/storage/analyzeOnGrowth.ts on PGlite) and follows the table's pages
 * since; a table never analyzed or small is counted instead.
 */
export async function ledgerSize(db: Queryable): Promise<LedgerSize> {
  const [stats] = await db.query<{ bytes: string | number }>(
    "SELECT pg_total_relation_size(to_regclass('sponsorships'))::text AS bytes",
  );
  let rows = await estimatedRows(db, "sponsorships");
  if (rows < COUNTED_ROWS) {
    const [counted] = await db.query<{ n: string | number }>("SELECT count(*)::text AS n FROM sponsorships");
    rows = Number(counted?.n ?? 0);
  }
  return { rows, bytes: Number(stats?.bytes ?? 0) };
}
