import type { FastifyInstance } from "fastify";
import type { AppContext } from "./context";
import { throttleFailures } from "./http/failureThrottle";
import { MANAGEMENT_PREFIX } from "./http/managementScope";
import { isRpcUrl, sendOutsideRoute } from "./rpc/server";

/** The wrong-credential throttle on both endpoints: every management and RPC request but a CORS preflight. */
export function throttleWrongCredentials(app: FastifyInstance, ctx: AppContext): void {
  throttleFailures(app, {
    config: ctx.failureThrottle,
    isCredentialed: (request) =>
      request.method !== "OPTIONS" && (request.url.startsWith(`${MANAGEMENT_PREFIX}/`) || isRpcUrl(request.url)),
    isRpc: (request) => isRpcUrl(request.url),
    sendRpc: sendOutsideRoute,
    now: ctx.now,
  });
}
