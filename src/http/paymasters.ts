import type { FastifyInstance } from "fastify";
import { createPaymaster, paymastersOf } from "../actions/paymasters";
import { createPaymasterSchema, listPaymastersSchema } from "../schemas/management/paymasters";
import type { Paymaster } from "../storage/paymasters";
import { accountGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

/**
 * How a paymaster is shown: the interface's fields plus the opaque `paymasterId`, the linked funding wallet and whether
 * it sponsors (`active: false` while paused).
 */
export const paymasterView = (paymaster: Paymaster) => ({
  name: paymaster.name,
  chainId: paymaster.chainId,
  apiKey: paymaster.apiKey,
  paymasterId: paymaster.id,
  fundingWalletAddress: paymaster.fundingAddress,
  active: paymaster.active,
  sponsor: paymaster.sponsor,
  allowedOrigins: paymaster.allowedOrigins,
  requireOrigin: paymaster.requireOrigin,
  validityBlocks: paymaster.validityBlocks,
});

/** Endpoints 1 and 2, served under both `paymasterParameters` and the public service's `paymaster`. */
export function paymasterRoutes(app: FastifyInstance, { actions, credentials }: Management, path: string): void {
  const api = typed(app);
  const account = accountGuard(credentials);

  api.get(`/${path}`, { schema: listPaymastersSchema, preValidation: account.preValidation }, async (request) => {
    const paymasters = await paymastersOf(actions, account.of(request));
    return success("DApp list fetched", paymasters.map(paymasterView));
  });

  api.post(`/${path}`, { schema: createPaymasterSchema, preValidation: account.preValidation }, async (request) => {
    const paymaster = await createPaymaster(actions, account.of(request), request.body);
    const { name, chainId, apiKey, paymasterId } = paymasterView(paymaster);
    const created = { name, chainId, apiKey, paymasterId };
    return success("DApp registered successfully", created);
  });
}
