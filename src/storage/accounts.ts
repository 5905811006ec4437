import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Queryable } from "./database";

export interface Account {
  id: string;
  name: string;
}

/** What a token may do: `admin` everything its account may, `read` only the requests that change nothing. */
export type TokenScope = "admin" | "read";

/** The token a request came with, as the guard and the audit log know it (never its secret). */
export interface CallerToken {
  id: string;
  name: string;
  scope: TokenScope;
  /** When it stops being accepted (ms of the service's clock); null: never. */
  expiresMs: number | null;
}

/** An account as a token names it, with that token. */
export type SignedInAccount = Account & { token: CallerToken };

/** Tokens are 256 random bits, so a plain SHA-256 is enough to make the stored form useless to a thief. */
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

export const newToken = () => `pm_${randomBytes(32).toString("base64url")}`;

/** The name the first token of an account carries (the one made with the account). */
const FIRST_TOKEN_NAME = "first";

/**
 * Creates an account with its first token (admin), made at `nowMs` (the service's clock), and returns that token: the
 * only time it exists in clear. One transaction when `db` can run one, so that an account never exists without its
 * token.
 */
export async function createAccount(
  db: Queryable & { transaction?: <T>(work: (tx: Queryable) => Promise<T>) => Promise<T> },
  name: string,
  nowMs: number,
): Promise<Account & { authToken: string }> {
  const id = randomUUID();
  const authToken = newToken();
  const write = async (tx: Queryable) => {
    await tx.query("INSERT INTO accounts (id, name) VALUES ($1, $2)", [id, name]);
    await tx.query(
      `INSERT INTO account_tokens (id, account_id, name, scope, token_hash, first, created_ms)
       VALUES ($1, $2, $3, 'admin', $4, true, $5)`,
      [randomUUID(), id, FIRST_TOKEN_NAME, hashToken(authToken), nowMs],
    );
  };
  if (db.transaction) await db.transaction(write);
  else await write(db);
  return { id, name, authToken };
}

interface CallerRow {
  id: string;
  name: string;
  token_id: string;
  token_name: string;
  scope: TokenScope;
  expires_ms: string | number | null;
}

/**
 * The account whose token hashes to `tokenHash` (see `hashToken`), with that token; undefined for a revoked or unknown
 * token, or one expired at `nowMs`.
 */
export async function findAccountByTokenHash(
  db: Queryable,
  tokenHash: string,
  nowMs: number,
): Promise<SignedInAccount | undefined> {
  const [row] = await db.query<CallerRow>(
    `SELECT a.id, a.name, t.id AS token_id, t.name AS token_name, t.scope, t.expires_ms
     FROM account_tokens t JOIN accounts a ON a.id = t.account_id
     WHERE t.token_hash = $1 AND (t.expires_ms IS NULL OR t.expires_ms > $2)`,
    [tokenHash, nowMs],
  );
  if (!row) return undefined;
  return {
    id: row.id,
    name: row.name,
    token: {
      id: row.token_id,
      name: row.token_name,
      scope: row.scope,
      expiresMs: row.expires_ms === null ? null : Number(row.expires_ms),
    },
  };
}

/**
 * Gives the account a new first token, made at `nowMs` (the service's clock), which replaces the old one at once (or
 * comes back after a revocation); undefined when there is no such account.
 */
export async function rotateToken(
  db: Queryable,
  id: string,
  nowMs: number,
): Promise<(Account & { authToken: string }) | undefined> {
  const account = await findAccount(db, id);
  if (!account) return undefined;
  const authToken = newToken();
  await db.query(
    `INSERT INTO account_tokens (id, account_id, name, scope, token_hash, first, created_ms)
     VALUES ($1, $2, $3, 'admin', $4, true, $5)
     ON CONFLICT (account_id) WHERE first
     DO UPDATE SET token_hash = EXCLUDED.token_hash, created_ms = EXCLUDED.created_ms, last_used_ms = NULL,
       expires_ms = NULL`,
    [randomUUID(), id, FIRST_TOKEN_NAME, hashToken(authToken), nowMs],
  );
  return { ...account, authToken };
}

/** Takes the account's first token away: it is refused until the next rotation. False when there is no such account. */
export async function revokeToken(db: Queryable, id: string): Promise<boolean> {
  const [account] = await db.query("SELECT id FROM accounts WHERE id = $1", [id]);
  if (!account) return false;
  await db.query("DELETE FROM account_tokens WHERE account_id = $1 AND first", [id]);
  return true;
}

export async function findAccount(db: Queryable, id: string): Promise<Account | undefined> {
  const [account] = await db.query<Account>("SELECT id, name FROM accounts WHERE id = $1", [id]);
  return account;
}

export async function countAccounts(db: Queryable): Promise<number> {
  const rows = await db.query<{ count: string | number }>("SELECT count(*) AS count FROM accounts");
  return Number(rows[0]?.count ?? 0);
}
