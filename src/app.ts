import type { FastifyInstance, FastifyServerOptions } from "fastify";
import { startSharedParts } from "./appParts";
import type { AppContext } from "./context";
import { throttleWrongCredentials } from "./credentialThrottle";
import { adminRoutes } from "./http/admin";
import { answerWhileClosing } from "./http/closing";
import { dashboardRoutes } from "./http/dashboard";
import { errorHandler } from "./http/errorHandler";
import { acceptJsonBodies } from "./http/jsonBodies";
import { registerManagement } from "./http/managementScope";
import { operationsRoutes } from "./http/operations";
import { createHttpServer } from "./httpServer";
import { registerRpcDocs } from "./rpc/docsRoute";
import { isRpcUrl, rpcIdOf, sendOutsideRoute } from "./rpc/server";
import { registerRpcEndpoint } from "./rpcEndpoint";
import { answerNoRoute } from "./unrouted";

export { MANAGEMENT_PREFIX } from "./http/managementScope";

/** Builds the service's HTTP app around a context. It never listens: main.ts does, tests use `inject`. */
export async function buildApp(
  ctx: AppContext,
  logger: FastifyServerOptions["logger"] = false,
): Promise<FastifyInstance> {
  const app = createHttpServer(ctx, logger);
  answerWhileClosing(app, { isRpcUrl, send: sendOutsideRoute, idOf: rpcIdOf });
  acceptJsonBodies(app);
  app.setErrorHandler(errorHandler(ctx.bodyLimitBytes));
  answerNoRoute(app);
  throttleWrongCredentials(app, ctx);
  const shared = await startSharedParts(app, ctx);
  await registerManagement(app, ctx, shared);
  await registerRpcEndpoint(app, ctx, shared);
  adminRoutes(app, ctx, shared.credentials);
  operationsRoutes(app, ctx, shared.metrics, shared.chains, shared.contractWatch);
  registerRpcDocs(app);
  dashboardRoutes(app, ctx.dashboardFolder);
  return app;
}
