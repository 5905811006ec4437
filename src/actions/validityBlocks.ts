import { PaymasterNotFoundError } from "../errors";
import type { SetValidityBlocksBody } from "../schemas/management/funding";
import { type Paymaster, setValidityBlocks as storeValidityBlocks } from "../storage/paymasters";
import { isUuid, type ManagementContext } from "./managementContext";

/**
 * Sets how many blocks the paymaster's EntryPoint v0.9 signatures stay valid, or with null goes back to windows in
 * seconds. The schema bounds the number; the RPC endpoint sees the change at once here, within a second elsewhere.
 */
export async function setValidityBlocks(
  ctx: ManagementContext,
  paymaster: Paymaster,
  body: SetValidityBlocksBody,
): Promise<Paymaster> {
  if (!isUuid(body.paymasterId) || body.paymasterId !== paymaster.id) throw new PaymasterNotFoundError();
  const updated = await storeValidityBlocks(ctx.db, paymaster.id, body.blocks);
  if (!updated) throw new PaymasterNotFoundError();
  ctx.setupChanged(paymaster.apiKey);
  return updated;
}
