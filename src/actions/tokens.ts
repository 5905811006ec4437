import { AccountNotFoundError, badRequest, TokenNameExistsError, TokenNotFoundError } from "../errors";
import { isoTimeMs } from "../schemas/management/isoTime";
import type { CreateTokenBody } from "../schemas/management/tokens";
import { findAccount, type TokenScope } from "../storage/accounts";
import {
  type AccountToken,
  deleteAccountToken,
  insertAccountToken,
  listAccountTokens,
  TOKEN_NAME_PER_ACCOUNT,
} from "../storage/accountTokens";
import type { Queryable } from "../storage/database";
import { isUuid, unlessTaken } from "./managementContext";

/** What the token use cases need: the management API's context, or the account command's. */
export interface TokenContext {
  db: Queryable;
  now: () => number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A token as the list shows it. */
const tokenView = (token: AccountToken) => ({
  tokenId: token.id,
  name: token.name,
  scope: token.scope,
  first: token.first,
  createdAt: new Date(token.createdMs).toISOString(),
  expiresAt: iso(token.expiresMs),
  lastUsedAt: iso(token.lastUsedMs),
});

/** A new token of the account; its secret is in the answer only. */
export async function createToken(ctx: TokenContext, accountId: string, body: CreateTokenBody) {
  const name = body.name.trim();
  const nowMs = ctx.now();
  let expiresMs: number | null = null;
  if (body.expiresAt !== undefined) {
    expiresMs = isoTimeMs("expiresAt", body.expiresAt);
    if (expiresMs <= nowMs) throw badRequest("expiresAt must be in the future");
  }
  const token = await unlessTaken(
    insertAccountToken(ctx.db, { accountId, name, scope: body.scope as TokenScope, expiresMs, nowMs }),
    { [TOKEN_NAME_PER_ACCOUNT]: () => new TokenNameExistsError() },
  );
  return {
    tokenId: token.id,
    name: token.name,
    scope: token.scope,
    expiresAt: iso(token.expiresMs),
    authToken: token.authToken,
  };
}

export const tokensOf = async (ctx: TokenContext, accountId: string) =>
  (await listAccountTokens(ctx.db, accountId)).map(tokenView);

/**
 * Revokes one of the account's tokens. Every instance refuses it from the moment the deletion commits: the database
 * notifies the credential caches (migration 21's triggers).
 */
export async function revokeAccountTokenById(ctx: TokenContext, accountId: string, tokenId: string) {
  const revoked = isUuid(tokenId) ? await deleteAccountToken(ctx.db, accountId, tokenId) : undefined;
  if (!revoked) throw new TokenNotFoundError();
  return { tokenId: revoked.id };
}

/** The account command names accounts by id: an unknown one is its 404, never a database error. */
export async function requireAccountById(ctx: TokenContext, accountId: string): Promise<string> {
  if (!isUuid(accountId) || !(await findAccount(ctx.db, accountId))) throw new AccountNotFoundError();
  return accountId;
}
