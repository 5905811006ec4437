import type { FastifyInstance } from "fastify";
import { limitUsage } from "../actions/limitUsage";
import { limitUsageSchema } from "../schemas/management/policies";
import { dappGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

/** An extension of the interface: how much of each spending limit the current cycle has used. */
export function limitUsageRoutes(app: FastifyInstance, { actions, credentials }: Management): void {
  const dapp = dappGuard(credentials);
  typed(app).get(
    "/paymaster-policy/usage",
    { schema: limitUsageSchema, preValidation: dapp.preValidation },
    async (request) => success("Paymaster limit usage fetched", await limitUsage(actions, dapp.of(request).paymaster)),
  );
}
