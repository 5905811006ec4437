// EntryPoint v0.9 parallel signing: the paymaster signature the "commit" step made, kept by (chain, EntryPoint, sender,
// nonce, paymaster) until the "finalize" step hands it out for the same operation (migrations 24 and 27). The paymaster
// is part of the key because sender and nonce are public: another tenant committing the same operation must not touch
// this paymaster's commitment. The signature is not a secret (it is public once the operation is sent) but it is only
// given out against the operation it was made for.
import type { Address, Hex } from "viem";
import type { Queryable } from "./database";

export interface SignatureCommitment {
  chainId: number;
  entryPoint: Address;
  sender: Address;
  nonce: bigint;
  paymasterId: string;
  /** The EntryPoint's hash of the operation as committed (paymaster fields in, placeholder signature out). */
  userOpHash: Hex;
  paymasterSignature: Hex;
  /** Unix seconds: the signature's validUntil, past which the commitment is dead. */
  validUntil: number;
}

interface CommitmentRow {
  user_op_hash: string;
  paymaster_signature: string;
  valid_until: string | number;
}

export class SignatureCommitments {
  constructor(private readonly db: Queryable) {}

  /** Keeps a commitment; this paymaster's one for the same operation is replaced (the wallet committed again). */
  async save(commitment: SignatureCommitment): Promise<void> {
    await this.db.query(
      `INSERT INTO signature_commitments
         (chain_id, entry_point, sender, nonce, paymaster_id, user_op_hash, paymaster_signature, valid_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (chain_id, entry_point, sender, nonce, paymaster_id) DO UPDATE SET
         user_op_hash = EXCLUDED.user_op_hash, paymaster_signature = EXCLUDED.paymaster_signature,
         valid_until = EXCLUDED.valid_until`,
      [
        commitment.chainId,
        commitment.entryPoint.toLowerCase(),
        commitment.sender.toLowerCase(),
        commitment.nonce.toString(),
        commitment.paymasterId,
        commitment.userOpHash,
        commitment.paymasterSignature,
        commitment.validUntil,
      ],
    );
  }

  /** The live commitment for one operation of one paymaster, if any (one past its validUntil is not returned). */
  async find(
    key: Pick<SignatureCommitment, "chainId" | "entryPoint" | "sender" | "nonce" | "paymasterId">,
    nowSeconds: number,
  ): Promise<Pick<SignatureCommitment, "userOpHash" | "paymasterSignature" | "validUntil"> | undefined> {
    const rows = await this.db.query<CommitmentRow>(
      `SELECT user_op_hash, paymaster_signature, valid_until FROM signature_commitments
       WHERE chain_id = $1 AND entry_point = $2 AND sender = $3 AND nonce = $4 AND paymaster_id = $5
         AND valid_until >= $6`,
      [
        key.chainId,
        key.entryPoint.toLowerCase(),
        key.sender.toLowerCase(),
        key.nonce.toString(),
        key.paymasterId,
        nowSeconds,
      ],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      userOpHash: row.user_op_hash as Hex,
      paymasterSignature: row.paymaster_signature as Hex,
      validUntil: Number(row.valid_until),
    };
  }

  /** Drops the commitments that expired before `nowSeconds`; returns how many. */
  async dropExpired(nowSeconds: number): Promise<number> {
    const rows = await this.db.query("DELETE FROM signature_commitments WHERE valid_until < $1 RETURNING nonce", [
      nowSeconds,
    ]);
    return rows.length;
  }
}
