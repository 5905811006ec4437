import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Queryable } from "./database";

export interface Account {
  id: string;
  name: string;
}

/** Tokens are 256 random bits, so a plain SHA-256 is enough to make the stored form useless to a thief. */
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

const newToken = () => `pm_${randomBytes(32).toString("base64url")}`;

/** Creates an account and returns its token: the only time the token exists in clear. */
export async function createAccount(db: Queryable, name: string): Promise<Account & { authToken: string }> {
  const id = randomUUID();
  const authToken = newToken();
  await db.query("INSERT INTO accounts (id, name, token_hash) VALUES ($1, $2, $3)", [id, name, hashToken(authToken)]);
  return { id, name, authToken };
}

/** The account whose token hashes to `tokenHash` (see `hashToken`); a revoked token's hash is NULL, so never found. */
export async function findAccountByTokenHash(db: Queryable, tokenHash: string): Promise<Account | undefined> {
  const rows = await db.query<Account>("SELECT id, name FROM accounts WHERE token_hash = $1", [tokenHash]);
  return rows[0];
}

/** Gives the account a new token, which replaces the old one at once; undefined when there is no such account. */
export async function rotateToken(db: Queryable, id: string): Promise<(Account & { authToken: string }) | undefined> {
  const authToken = newToken();
  const rows = await db.query<Account>("UPDATE accounts SET token_hash = $2 WHERE id = $1 RETURNING id, name", [
    id,
    hashToken(authToken),
  ]);
  return rows[0] && { ...rows[0], authToken };
}

/** Takes the account's token away: no token is accepted until the next rotation. False when there is no such account. */
export async function revokeToken(db: Queryable, id: string): Promise<boolean> {
  const rows = await db.query("UPDATE accounts SET token_hash = NULL WHERE id = $1 RETURNING id", [id]);
  return rows.length > 0;
}

export async function countAccounts(db: Queryable): Promise<number> {
  const rows = await db.query<{ count: string | number }>("SELECT count(*) AS count FROM accounts");
  return Number(rows[0]?.count ?? 0);
}
