import { randomUUID } from "node:crypto";
import { hashToken, newToken, type TokenScope } from "./accounts";
import type { Queryable } from "./database";

/** A token as it is listed: everything but its secret, which is never stored in clear. */
export interface AccountToken {
  id: string;
  name: string;
  scope: TokenScope;
  /** The token made with the account (always admin; the account command rotates it). */
  first: boolean;
  createdMs: number;
  expiresMs: number | null;
  /** Noted at most once a minute per instance (src/http/tokenUse.ts); null: never used. */
  lastUsedMs: number | null;
}

interface TokenRow {
  id: string;
  name: string;
  scope: TokenScope;
  first: boolean;
  created_ms: string | number;
  expires_ms: string | number | null;
  last_used_ms: string | number | null;
}

const COLUMNS = "id, name, scope, first, created_ms, expires_ms, last_used_ms";

const orNull = (value: string | number | null) => (value === null ? null : Number(value));

const toToken = (row: TokenRow): AccountToken => ({
  id: row.id,
  name: row.name,
  scope: row.scope,
  first: row.first,
  createdMs: Number(row.created_ms),
  expiresMs: orNull(row.expires_ms),
  lastUsedMs: orNull(row.last_used_ms),
});

/** An account's tokens have distinct names (a UniqueViolation of this constraint otherwise). */
export const TOKEN_NAME_PER_ACCOUNT = "account_tokens_name_per_account";

/** A new token of the account; the answer holds the token in clear, the only time it exists so. */
export async function insertAccountToken(
  db: Queryable,
  fields: { accountId: string; name: string; scope: TokenScope; expiresMs: number | null; nowMs: number },
): Promise<AccountToken & { authToken: string }> {
  const authToken = newToken();
  const [row] = await db.query<TokenRow>(
    `INSERT INTO account_tokens (id, account_id, name, scope, token_hash, created_ms, expires_ms)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [randomUUID(), fields.accountId, fields.name, fields.scope, hashToken(authToken), fields.nowMs, fields.expiresMs],
  );
  return { ...toToken(row as TokenRow), authToken };
}

/** The account's tokens, the first one first, then oldest first; expired ones too (they show their expiry), revoked ones are gone. */
export async function listAccountTokens(db: Queryable, accountId: string): Promise<AccountToken[]> {
  const rows = await db.query<TokenRow>(
    `SELECT ${COLUMNS} FROM account_tokens WHERE account_id = $1 ORDER BY first DESC, created_ms, id`,
    [accountId],
  );
  return rows.map(toToken);
}

/** Revokes one token of the account (the row goes); undefined when the account has no such token. */
export async function deleteAccountToken(
  db: Queryable,
  accountId: string,
  tokenId: string,
): Promise<AccountToken | undefined> {
  const [row] = await db.query<TokenRow>(
    `DELETE FROM account_tokens WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [accountId, tokenId],
  );
  return row && toToken(row);
}

/** Notes that a token was used at `nowMs` (never moving the note back). */
export async function noteTokenUse(db: Queryable, tokenId: string, nowMs: number): Promise<void> {
  await db.query(
    "UPDATE account_tokens SET last_used_ms = $2 WHERE id = $1 AND (last_used_ms IS NULL OR last_used_ms < $2)",
    [tokenId, nowMs],
  );
}
