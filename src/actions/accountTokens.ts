import { AccountNotFoundError } from "../errors";
import { revokeToken, rotateToken } from "../storage/accounts";
import type { Queryable } from "../storage/database";
import { isUuid } from "./managementContext";
import type { TokenContext } from "./tokens";

/**
 * A new token for the account; the old one is refused from the moment this returns, on every instance (the credential
 * caches hear of it through the database). The new token exists in clear only in this answer.
 */
export async function rotateAccountToken(ctx: TokenContext, accountId: string) {
  const rotated = isUuid(accountId) ? await rotateToken(ctx.db, accountId, ctx.now()) : undefined;
  if (!rotated) throw new AccountNotFoundError();
  return rotated;
}

/** Takes the account's token away: every request with it is refused until a rotation gives the account a new one. */
export async function revokeAccountToken(db: Queryable, accountId: string): Promise<{ id: string }> {
  if (!isUuid(accountId) || !(await revokeToken(db, accountId))) throw new AccountNotFoundError();
  return { id: accountId };
}
