import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { FastifyHttpOptions } from "fastify";
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from "../config";
import { lingerOnEarlyClose } from "./lingeringClose";

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

/** How long a late client has to read its 408 before the connection is destroyed. */
const CLOSE_GRACE_MS = 1000;

const LATE_BODY = JSON.stringify({ statusCode: 408, message: "Request headers did not arrive in time" });
/** What a connection gets when its headers are late, before it is closed. */
const HEADERS_TOO_LATE =
  "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n" +
  `Content-Length: ${Buffer.byteLength(LATE_BODY)}\r\n\r\n${LATE_BODY}`;

/**
 * A hard deadline for a connection's first request headers, counted from the connection: Node's own headers timeout
 * starts later and is checked loosely, so a client dripping a byte every few seconds was held for up to twice as long,
 * and one that sends nothing was held for ever. Once the headers are in, the deadline stops, so a slow answer
 * (webhooks, gas estimation) is never cut; later requests on a keep-alive connection have Node's timeouts. Connections
 * beyond the cap are closed as they arrive. A connection closed after an answer that did not wait for the whole body
 * reads the rest of it for a moment first, so that the client can read the answer (lingeringClose.ts).
 */
export function limitConnections(server: Server, limits: HttpLimits = DEFAULT_HTTP_LIMITS): void {
  server.maxConnections = limits.maxConnections;
  lingerOnEarlyClose(server);
  const deadlines = new WeakMap<Socket, NodeJS.Timeout>();
  server.on("connection", (socket: Socket) => {
    const deadline = setTimeout(() => {
      // end, not write and destroy: closing with the answer still unsent resets the connection, and the client then
      // learns it is closed only when it next writes. A client that does not read is destroyed a moment later.
      socket.end(HEADERS_TOO_LATE);
      setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    }, limits.headersTimeoutMs);
    deadlines.set(socket, deadline);
    socket.once("close", () => clearTimeout(deadline));
  });
  server.on("request", (request: IncomingMessage) => clearTimeout(deadlines.get(request.socket)));
}
