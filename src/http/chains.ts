import type { FastifyInstance } from "fastify";
import { listChainsSchema } from "../schemas/management/chains";
import { accountGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

/** An extension: the configured chains, by id, which is exactly what paymaster creation accepts. */
export function chainRoutes(app: FastifyInstance, { ctx, credentials }: Management): void {
  const account = accountGuard(credentials);
  typed(app).get("/chains", { schema: listChainsSchema, preValidation: account.preValidation }, async () => {
    const chains = [...ctx.chains.values()]
      .map(({ chainId, name }) => ({ chainId, name }))
      .sort((a, b) => a.chainId - b.chainId);
    return success("Supported chains fetched", chains);
  });
}
