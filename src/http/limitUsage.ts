import type { FastifyInstance } from "fastify";
import { limitUsage } from "../actions/limitUsage";
import { messages } from "../errors";
import { limitUsageSchema } from "../schemas/management/policies";
import { requireDapp } from "./auth";
import { success } from "./envelope";
import { guard, type Management, typed } from "./management";

/** An extension of the interface: how much of each spending limit the current cycle has used. */
export function limitUsageRoutes(app: FastifyInstance, { ctx, actions }: Management): void {
  const dapp = guard((request) =>
    requireDapp(ctx.db, request, { missingMessage: messages.authTokenAndApiKeyRequired }),
  );
  typed(app).get(
    "/paymaster-policy/usage",
    { schema: limitUsageSchema, preValidation: dapp.preValidation },
    async (request) => success("Paymaster limit usage fetched", await limitUsage(actions, dapp.of(request).paymaster)),
  );
}
