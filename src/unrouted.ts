import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { messages } from "./errors";
import { redactUrl } from "./logging/redaction";
import { isRpcUrl } from "./rpc/server";
import { refuseNoRpcRoute, refuseUnroutedRpc } from "./rpc/unrouted";

// Requests that reach no route: a URL the router cannot read, a path no route has. Each gets the envelope of its
// prefix (a JSON-RPC error under the RPC prefix, the management envelope elsewhere), never Fastify's own body.

/** The longest path segment the router takes; a longer one is answered by answerUnreadableUrl. */
export const MAX_PARAM_LENGTH = 2048;

/** Fastify's frameworkErrors: a badly encoded URL, or a path segment over the router's limit (which bypass the error handler). */
export function answerUnreadableUrl(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const url = redactUrl(request.url);
  // Fastify's messages quote the URL as sent; these quote it redacted.
  const message =
    error.code === "FST_ERR_BAD_URL"
      ? `'${url}' is not a valid url component`
      : error.code === "FST_ERR_MAX_PARAM_LENGTH"
        ? `'${url}' has a path segment longer than ${MAX_PARAM_LENGTH} characters`
        : error.message;
  if (isRpcUrl(request.url)) return refuseUnroutedRpc(reply, message);
  const statusCode = typeof error.statusCode === "number" && error.statusCode < 500 ? error.statusCode : 400;
  return reply.status(statusCode).send({ statusCode, message });
}

/** A path no route has: 404, naming the method and the URL (redacted). */
export function answerNoRoute(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => {
    const route = `${request.method} ${redactUrl(request.url)}`;
    if (isRpcUrl(request.url)) return refuseNoRpcRoute(reply, route);
    return reply.status(404).send({ statusCode: 404, message: `${messages.notFound}: ${route}` });
  });
}
