// Whether a sender has an up-front token paymaster operation with a permit signed and still outstanding: recorded as
// sponsored with the permit rule's outcome for the token (src/sponsorship/rules/tokenPermit.ts), neither settled nor
// released, its signature not expired. A token has one permit nonce per owner, so a second permit signed now would be
// at the same nonce as the first, and one of the two operations would fail its validation.
import type { Queryable } from "./database";

export class OutstandingPermits {
  constructor(private readonly db: Queryable) {}

  async has(chainId: number, sender: string, token: string, nowSeconds: number): Promise<boolean> {
    const marker = JSON.stringify([{ rule: "ERC20 permit", feeToken: token.toLowerCase(), permit: true }]);
    const rows = await this.db.query<{ found: number }>(
      `SELECT 1 AS found FROM sponsorships
        WHERE chain_id = $1 AND sender = $2 AND sponsored AND settled_at IS NULL AND released_at IS NULL
          AND valid_until > $3 AND mode = 'ERC20' AND rule_outcomes @> $4::jsonb
        LIMIT 1`,
      [chainId, sender.toLowerCase(), nowSeconds, marker],
    );
    return rows.length > 0;
  }
}
