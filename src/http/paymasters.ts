import type { FastifyInstance } from "fastify";
import type { AppContext } from "../context";
import { badRequest, messages } from "../errors";
import { insertPaymaster, listPaymasters, type Paymaster } from "../storage/paymasters";
import { requireAccount } from "./auth";
import { success } from "./envelope";
import { jsonObject, oneOf, requiredInteger, requiredString } from "./validate";

/** How a paymaster is shown: the interface's fields plus the opaque `paymasterId` and the linked funding wallet. */
export const paymasterView = (paymaster: Paymaster) => ({
  name: paymaster.name,
  chainId: paymaster.chainId,
  apiKey: paymaster.apiKey,
  paymasterId: paymaster.id,
  fundingWalletAddress: paymaster.fundingAddress,
});

/** Endpoints 1 and 2, served under both `paymasterParameters` and the public service's `paymaster`. */
export function paymasterRoutes(app: FastifyInstance, ctx: AppContext, path: string): void {
  app.get(`/${path}`, async (request) => {
    const account = await requireAccount(ctx.db, request, messages.authTokenRequired);
    const paymasters = await listPaymasters(ctx.db, account.id);
    return success("DApp list fetched", paymasters.map(paymasterView));
  });

  app.post(`/${path}`, async (request) => {
    const account = await requireAccount(ctx.db, request, messages.authTokenRequired);
    const body = jsonObject(request.body);
    const name = requiredString(body, "name");
    oneOf(requiredString(body, "type"), ["HYBRID"], "type");
    const chainId = requiredInteger(body, "chainId");
    const version = requiredString(body, "version", 32);
    if (!ctx.chains.has(chainId)) throw badRequest(messages.chainNotSupported);
    const paymaster = await insertPaymaster(ctx.db, { accountId: account.id, name, chainId, type: "HYBRID", version });
    const { fundingWalletAddress: _, ...created } = paymasterView(paymaster);
    return success("DApp registered successfully", created);
  });
}
