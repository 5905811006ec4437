import type { Server } from "node:http";
import type { FastifyHttpOptions } from "fastify";
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from "../config";

/** How often Node looks for requests past their headers or request timeout (its default, 30 s, is far too slow). */
const TIMEOUT_CHECK_INTERVAL_MS = 1000;

/** The Fastify server options that bound how long a client may take, from the configured limits. */
export function timeoutOptions(
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
): Pick<FastifyHttpOptions<Server>, "requestTimeout" | "keepAliveTimeout" | "http"> {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
  };
}

/**
 * What Node's own timeouts leave open: a connection that sends nothing at all (the headers timeout starts at the first
 * byte) is closed after the headers timeout, and connections beyond the cap are closed as they arrive. The idle timer
 * stops once a request has arrived, so a slow answer (webhooks, gas estimation) is never cut; between requests Node's
 * keep-alive timeout applies.
 */
export function limitConnections(server: Server, limits: HttpLimits = DEFAULT_HTTP_LIMITS): void {
  server.maxConnections = limits.maxConnections;
  server.on("connection", (socket) => socket.setTimeout(limits.headersTimeoutMs));
  server.on("request", (request) => request.socket.setTimeout(0));
}
