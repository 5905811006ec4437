import { randomUUID } from "node:crypto";
import type { BatchObserver } from "../metrics/metrics";
import { Batcher } from "./batch";
import type { Queryable } from "./database";

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
}

/**
 * The rows, and in the same statement what the sponsored ones add to their deposit's holds (deposit_holds, by the
 * minute their validity ends; keys in a fixed order, so that concurrent statements lock them alike).
 */
const INSERT = `
  WITH inserted AS (
    INSERT INTO sponsorships (id, paymaster_id, chain_id, sender, nonce, sponsored, reason, user_op_hash, call_gas_limit,
      verification_gas_limit, pre_verification_gas, max_fee_per_gas, max_priority_fee_per_gas, valid_until, valid_after,
      rule_outcomes, funding_address, paymaster_address, max_charge)
    SELECT id::uuid, paymaster_id::uuid, chain_id::bigint, sender, nonce::numeric, sponsored::boolean, reason,
      user_op_hash, cgl::numeric, vgl::numeric, pvg::numeric, mfpg::numeric, mpfpg::numeric, valid_until::bigint,
      valid_after::bigint, outcomes::jsonb, funding_address, paymaster_address, max_charge::numeric
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
      $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::text[],
      $18::text[], $19::text[])
      AS t(id, paymaster_id, chain_id, sender, nonce, sponsored, reason, user_op_hash, cgl, vgl, pvg, mfpg, mpfpg,
        valid_until, valid_after, outcomes, funding_address, paymaster_address, max_charge)
    RETURNING chain_id, paymaster_address, funding_address, valid_until, max_charge, sponsored
  )
  INSERT INTO deposit_holds (chain_id, paymaster_address, funding_address, valid_until_minute, held)
  SELECT chain_id, paymaster_address, funding_address, (valid_until + 59) / 60 * 60, SUM(max_charge)
  FROM inserted
  WHERE sponsored AND max_charge IS NOT NULL AND paymaster_address IS NOT NULL AND funding_address IS NOT NULL
    AND valid_until IS NOT NULL
  GROUP BY 1, 2, 3, 4
  ORDER BY 1, 2, 3, 4
  ON CONFLICT (chain_id, paymaster_address, funding_address, valid_until_minute)
  DO UPDATE SET held = deposit_holds.held + EXCLUDED.held`;

const text = (value: bigint | number | string | undefined) => (value === undefined ? null : String(value));

function columns(rows: SponsorshipRecord[]): unknown[][] {
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
  ];
}

/** Records sponsorships in group commits; `record` resolves once the row is durable. */
export class SponsorshipLog {
  readonly #insert: Batcher<SponsorshipRecord, void>;

  constructor(db: Queryable, observe?: BatchObserver) {
    this.#insert = new Batcher(
      async (records) => {
        await db.query(INSERT, columns(records));
        return records.map(() => undefined);
      },
      undefined,
      observe,
    );
  }

  record(record: SponsorshipRecord): Promise<void> {
    return this.#insert.submit(record);
  }
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
}

export async function listSponsorships(db: Queryable, paymasterId: string): Promise<StoredSponsorship[]> {
  return db.query<StoredSponsorship>(
    `SELECT sender, nonce::text AS nonce, sponsored, reason, user_op_hash, valid_until, valid_after,
       call_gas_limit::text AS call_gas_limit, rule_outcomes
     FROM sponsorships WHERE paymaster_id = $1 ORDER BY created_at, id`,
    [paymasterId],
  );
}
