import { ChainNotSupportedError, PaymasterNameExistsError } from "../errors";
import type { CreatePaymasterBody } from "../schemas/management/paymasters";
import type { Account } from "../storage/accounts";
import { insertPaymaster, listPaymasters, PAYMASTER_NAME_PER_CHAIN, type Paymaster } from "../storage/paymasters";
import { type ManagementContext, unlessTaken } from "./managementContext";

/** The account's paymasters. */
export const paymastersOf = (ctx: ManagementContext, account: Account): Promise<Paymaster[]> =>
  listPaymasters(ctx.db, account.id);

/** A new paymaster on a chain this service sponsors on; names are unique per chain. */
export async function createPaymaster(
  ctx: ManagementContext,
  account: Account,
  body: CreatePaymasterBody,
): Promise<Paymaster> {
  if (!ctx.chains.has(body.chainId)) throw new ChainNotSupportedError();
  return unlessTaken(
    insertPaymaster(ctx.db, {
      accountId: account.id,
      name: body.name,
      chainId: body.chainId,
      type: body.type,
      version: body.version,
    }),
    { [PAYMASTER_NAME_PER_CHAIN]: () => new PaymasterNameExistsError() },
  );
}
