import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { Queryable } from "./database";

export interface Account {
  id: string;
  name: string;
}

/** Tokens are 256 random bits, so a plain SHA-256 is enough to make the stored form useless to a thief. */
const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** Creates an account and returns its token: the only time the token exists in clear. */
export async function createAccount(db: Queryable, name: string): Promise<Account & { authToken: string }> {
  const id = randomUUID();
  const authToken = `pm_${randomBytes(32).toString("base64url")}`;
  await db.query("INSERT INTO accounts (id, name, token_hash) VALUES ($1, $2, $3)", [id, name, hashToken(authToken)]);
  return { id, name, authToken };
}

export async function findAccountByToken(db: Queryable, authToken: string): Promise<Account | undefined> {
  const rows = await db.query<Account>("SELECT id, name FROM accounts WHERE token_hash = $1", [hashToken(authToken)]);
  return rows[0];
}

export async function countAccounts(db: Queryable): Promise<number> {
  const rows = await db.query<{ count: string | number }>("SELECT count(*) AS count FROM accounts");
  return Number(rows[0]?.count ?? 0);
}
