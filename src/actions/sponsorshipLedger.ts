import { nativeUsdPriceSource } from "../chain/nativeUsdPrice";
import { badRequest } from "../errors";
import {
  type LedgerQuery,
  MAX_STATS_BUCKETS,
  type STATS_BUCKETS,
  type StatsQuery,
} from "../schemas/management/sponsorships";
import { priceText, usdUnitsToDollars } from "../sponsorship/usdAmount";
import type { Paymaster } from "../storage/paymasters";
import {
  type LedgerBucket,
  type LedgerFilter,
  type LedgerRow,
  type LedgerStatus,
  ledgerBuckets,
  ledgerPage,
} from "../storage/sponsorshipLedger";
import type { ManagementContext } from "./managementContext";
import { alwaysPaged, type Page, pageOf } from "./pageCursor";

/**
 * The start of 9999-12-31 in ms: a range rounded up to a whole day from here still ends in year 9999, beyond which a
 * database timestamp cannot be written.
 */
const MAX_MILLIS = Date.UTC(9999, 11, 31);

const BUCKET_MS: Record<(typeof STATS_BUCKETS)[number], number> = { hour: 3_600_000, day: 86_400_000 };

/** A time field the schema has checked to be digits. */
function millisOf(field: "from" | "to", value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (ms > MAX_MILLIS) throw badRequest(`${field} must be at most ${MAX_MILLIS} (9999-12-31)`);
  return ms;
}

function rangeOf(query: { from?: string; to?: string }): { fromMs?: number; toMs?: number } {
  const fromMs = millisOf("from", query.from);
  const toMs = millisOf("to", query.to);
  if (fromMs !== undefined && toMs !== undefined && fromMs > toMs) throw badRequest("from must not be after to");
  return { fromMs, toMs };
}

/** A ledger row as answered: its recorded price and dollar figures, when it has them, beside the wei. */
export type LedgerRowView = Omit<LedgerRow, "usd"> & {
  nativeUsdPrice?: string;
  worstCaseUsd?: string | null;
  actualUsd?: string | null;
};

function viewOf({ usd, ...row }: LedgerRow): LedgerRowView {
  if (!usd) return row;
  const dollars = (units: bigint | null) => (units === null ? null : usdUnitsToDollars(units));
  return {
    ...row,
    nativeUsdPrice: usd.price,
    worstCaseUsd: dollars(usd.worstCaseUnits),
    actualUsd: dollars(usd.actualUnits),
  };
}

/** One page of the paymaster's ledger, newest first, with the query's filters. */
export async function sponsorshipPage(
  ctx: ManagementContext,
  paymaster: Paymaster,
  query: LedgerQuery,
): Promise<Page<LedgerRowView>> {
  const page = alwaysPaged(query, "sponsorship");
  const filter: LedgerFilter = {
    paymasterId: paymaster.id,
    nowSeconds: Math.floor(ctx.now() / 1000),
    ...rangeOf(query),
    ...(query.status ? { status: query.status as LedgerStatus } : {}),
    ...(query.sender ? { sender: query.sender.toLowerCase() } : {}),
  };
  const rows = await ledgerPage(ctx.db, filter, page.limit + 1, page.after?.key);
  return pageOf(
    rows.map(({ row, key }) => ({ item: viewOf(row), cursor: { part: "sponsorship" as const, key } })),
    page.limit,
  );
}

/** A bucket's spend and hold in dollars (decimal texts), and whether every row of its wei figures is in them. */
export interface BucketUsd {
  spendUsd: string;
  heldUsd: string;
  usdComplete: boolean;
}

export interface LedgerStats {
  bucket: (typeof STATS_BUCKETS)[number];
  from: number;
  to: number;
  buckets: (LedgerBucket & { dollars?: BucketUsd })[];
  /**
   * Only when the paymaster's chain has a native token price configured: the price read now (a decimal text) for the
   * rows that recorded none, or null with the reason when it could not be read.
   */
  nativeUsdPrice?: { price: string; error?: undefined } | { price: null; error: string };
}

/** The chain's price now, through the reader the USD rules use; undefined when the chain has none configured. */
async function currentPrice(ctx: ManagementContext, chainId: number, nowMs: number) {
  const chain = ctx.chains.get(chainId);
  if (!chain?.nativeUsdPrice) return undefined;
  const reading = await nativeUsdPriceSource(chain.nativeUsdPrice, chain).read(nowMs);
  return reading.ok ? { price: priceText(reading.price) } : { price: null, error: reading.reason };
}

/**
 * Counts and spend per bucket over whole buckets: `from` is rounded down and `to` up to the bucket, so every bucket is
 * complete. Every bucket of the range is in the answer, empty ones as zeros, so at most MAX_STATS_BUCKETS are allowed.
 */
export async function sponsorshipStats(
  ctx: ManagementContext,
  paymaster: Paymaster,
  query: StatsQuery,
): Promise<LedgerStats> {
  const bucket = (query.bucket ?? "day") as LedgerStats["bucket"];
  const size = BUCKET_MS[bucket];
  const nowMs = ctx.now();
  const range = rangeOf(query);
  const toMs = Math.ceil((range.toMs ?? nowMs) / size) * size;
  const fromMs = Math.floor((range.fromMs ?? toMs - 30 * size) / size) * size;
  const count = (toMs - fromMs) / size;
  if (count > MAX_STATS_BUCKETS) {
    throw badRequest(`from and to span ${count} buckets of one ${bucket}; at most ${MAX_STATS_BUCKETS}`);
  }
  const price = await currentPrice(ctx, paymaster.chainId, nowMs);
  const buckets = await ledgerBuckets(
    ctx.db,
    { paymasterId: paymaster.id, nowSeconds: Math.floor(nowMs / 1000), fromMs, toMs },
    size,
    price?.price,
  );
  return {
    bucket,
    from: fromMs,
    to: toMs,
    buckets: buckets.map((b) =>
      b.usd
        ? {
            ...b,
            dollars: {
              spendUsd: usdUnitsToDollars(b.usd.spendUnits),
              heldUsd: usdUnitsToDollars(b.usd.heldUnits),
              usdComplete: b.usd.unpriced === 0,
            },
          }
        : b,
    ),
    ...(price ? { nativeUsdPrice: price } : {}),
  };
}
