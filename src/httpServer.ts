import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { AppContext } from "./context";
import { AccessLog } from "./http/accessLog";
import { limitConnections, timeoutOptions } from "./http/connectionLimits";
import { redactedRequest } from "./logging/redaction";
import { answerUnreadableUrl, MAX_PARAM_LENGTH } from "./unrouted";

/** The Fastify instance with the server's limits: body size, timeouts, connections, the proxies trusted, the log. */
export function createHttpServer(ctx: AppContext, logger: FastifyServerOptions["logger"]): FastifyInstance {
  const app = Fastify({
    logger,
    logController: new AccessLog(),
    bodyLimit: ctx.bodyLimitBytes,
    // Slow clients are cut off (headers, whole request, idle keep-alive) rather than held for ever.
    ...timeoutOptions(ctx.http),
    // Behind a reverse proxy, the client address (throttling, logs) comes from X-Forwarded-For when configured.
    trustProxy: typeof ctx.trustProxy === "number" ? trustHops(ctx.trustProxy) : (ctx.trustProxy ?? false),
    // An over-long id is an unknown id (404 from its handler), not a 414 from the router.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Requests on kept-alive connections during a close get our envelopes (answerWhileClosing), not Fastify's body.
    return503OnClosing: false,
    // A badly encoded URL gets the envelope of its prefix, not Fastify's own body (which bypasses the error handler).
    frameworkErrors: answerUnreadableUrl,
    // Request log lines show URLs with their credentials redacted (the RPC path's apiKey, ?authToken=...), whatever
    // logger the caller configured.
    childLoggerFactory: (logger, bindings, options) =>
      logger.child(bindings, { ...options, serializers: { ...options.serializers, req: redactedRequest } }),
  });
  limitConnections(app.server, ctx.http);
  return app;
}

/** Believes the nearest `hops` proxies: Fastify's trustProxy as a number (its type does not list that form). */
const trustHops = (hops: number) => (_address: string, hop: number) => hop < hops;
