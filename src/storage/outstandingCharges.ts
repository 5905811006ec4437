import { Batcher } from "./batch";
import type { Queryable } from "./database";

/** Whose outstanding sponsorships to sum: one funding wallet's balance in one verifying paymaster on one chain. */
export interface OutstandingQuery {
  chainId: number;
  /** Lowercase. */
  paymasterAddress: string;
  /** Lowercase. */
  fundingAddress: string;
  /** Sponsorships with a validUntil (unix seconds) before this one are no longer counted. */
  notBefore: number;
  /** The operation being decided: its own earlier signatures are left out, since only one of them can be mined. */
  sender: string;
  nonce: bigint;
  /** Gas the contract charges on top of the EntryPoint's cost (VerifyingPaymaster.POST_OP_OVERHEAD_GAS). */
  overheadGas: bigint;
}

/**
 * The most the sponsorships still outstanding against each deposit can cost, per query, in wei: the sponsored ones that
 * are neither settled nor released nor expired, of every paymaster sharing the funding wallet. Signatures with the
 * same sender and nonce count once (the largest), since the EntryPoint runs a nonce only once.
 */
const SUM = `
  WITH q AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::numeric[], $7::numeric[])
      WITH ORDINALITY AS q(chain_id, paymaster_address, funding_address, not_before, sender, nonce, overhead, i)
  ), per_nonce AS (
    SELECT q.i, MAX((s.call_gas_limit + 3 * s.verification_gas_limit + s.pre_verification_gas + q.overhead)
      * s.max_fee_per_gas) AS worst
    FROM q LEFT JOIN sponsorships s
      ON s.chain_id = q.chain_id AND s.funding_address = q.funding_address
      AND s.paymaster_address = q.paymaster_address AND s.valid_until >= q.not_before
      AND s.sponsored AND s.settled_at IS NULL AND s.released_at IS NULL
      AND NOT (s.sender = q.sender AND s.nonce = q.nonce)
    GROUP BY q.i, s.sender, s.nonce
  )
  SELECT i::int AS i, COALESCE(SUM(worst), 0)::text AS held FROM per_nonce GROUP BY i ORDER BY i`;

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
        queries.map((q) => q.sender.toLowerCase()),
        queries.map((q) => q.nonce.toString()),
        queries.map((q) => q.overheadGas.toString()),
      ]);
      const held = new Map(rows.map((row) => [Number(row.i), BigInt(row.held)]));
      return queries.map((_, index) => held.get(index + 1) ?? 0n);
    });
  }

  of(query: OutstandingQuery): Promise<bigint> {
    return this.#batcher.submit(query);
  }
}
