import { Batcher } from "./batch";
import type { Queryable } from "./database";

/** Whose outstanding sponsorships to sum: one funding wallet's balance in one verifying paymaster on one chain. */
export interface OutstandingQuery {
  chainId: number;
  /** Lowercase. */
  paymasterAddress: string;
  /** Lowercase. */
  fundingAddress: string;
  /** Sponsorships whose validity ended before this (unix seconds) no longer count. */
  notBefore: number;
}

/**
 * The most the sponsorships still outstanding against each deposit can cost, per query, in wei: the sponsored ones
 * that are neither settled nor released and whose validity (rounded up to the minute) has not ended, of every
 * paymaster sharing the funding wallet. It reads deposit_holds, a few rows per deposit, whatever the number of
 * sponsorships.
 */
const SUM = `
  SELECT q.i::int AS i, COALESCE(SUM(h.held), 0)::text AS held
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])
    WITH ORDINALITY AS q(chain_id, paymaster_address, funding_address, not_before, i)
  LEFT JOIN deposit_holds h
    ON h.chain_id = q.chain_id AND h.paymaster_address = q.paymaster_address
    AND h.funding_address = q.funding_address AND h.valid_until_minute >= q.not_before
  GROUP BY q.i ORDER BY q.i`;

/** Sums outstanding sponsorships in group commits: the queries of concurrent requests share one statement. */
export class OutstandingCharges {
  readonly #batcher: Batcher<OutstandingQuery, bigint>;

  constructor(db: Queryable) {
    this.#batcher = new Batcher(async (queries) => {
      const rows = await db.query<{ i: number; held: string }>(SUM, [
        queries.map((q) => String(q.chainId)),
        queries.map((q) => q.paymasterAddress),
        queries.map((q) => q.fundingAddress),
        queries.map((q) => String(q.notBefore)),
      ]);
      const held = new Map(rows.map((row) => [Number(row.i), BigInt(row.held)]));
      return queries.map((_, index) => held.get(index + 1) ?? 0n);
    });
  }

  of(query: OutstandingQuery): Promise<bigint> {
    return this.#batcher.submit(query);
  }
}
