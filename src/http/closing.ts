import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { RESOURCE_UNAVAILABLE, RpcError } from "../errors";
import { closeConnectionsGently } from "./closingConnections";

/** Seconds a client is told to wait: a retry opens a new connection, which a load balancer gives another instance. */
const RETRY_AFTER_SECONDS = 1;
const SHUTTING_DOWN = "Service unavailable: this instance is shutting down; retry on a new connection";

type RpcId = string | number | null;

/**
 * Requests that arrive once the app closes (on kept-alive connections: new connections are no longer accepted) are
 * answered at once with 503, `Connection: close` and `Retry-After`, in the envelope of their path: a JSON-RPC error
 * with the request's id under the RPC prefix, `{statusCode, message}` elsewhere. Fastify's own answer then
 * (`return503OnClosing`, which must be off for this to run) is a body of its own that no client of ours can read.
 * Requests already in flight when the close begins are answered as usual, but with `Connection: close`, and idle
 * connections get a moment to be used before they are closed (closingConnections.ts).
 */
export function answerWhileClosing(
  app: FastifyInstance,
  rpc: {
    isRpcUrl: (url: string) => boolean;
    send: (reply: FastifyReply, error: RpcError, id: RpcId) => FastifyReply;
    idOf: (body: unknown) => RpcId;
  },
): void {
  let closing = false;
  const connections = closeConnectionsGently(app.server);
  // preClose runs as the close begins, before the server stops accepting connections.
  app.addHook("preClose", (done) => {
    closing = true;
    connections.begin();
    done();
  });
  const leaving = (reply: FastifyReply) =>
    reply.status(503).header("connection", "close").header("retry-after", String(RETRY_AFTER_SECONDS));
  // Requests under the RPC prefix that arrived during the close, to answer once their body is read.
  const arrivedClosing = new WeakSet<FastifyRequest>();
  // Callback hooks, not async ones: every request passes them, and an async hook costs each request a promise. One
  // that answers sends and does not call `done`.
  app.addHook("onRequest", (request, reply, done) => {
    if (!closing) return done();
    // The management API and the rest: before the body is read.
    if (!rpc.isRpcUrl(request.url)) {
      leaving(reply).send({ statusCode: 503, message: SHUTTING_DOWN });
      return;
    }
    // A preflight still gets its 204, so that a browser wallet sends the request and can read the answer.
    if (request.method !== "OPTIONS") arrivedClosing.add(request);
    done();
  });
  // The RPC path: once the body is read, to echo its id. A request whose body was still coming when the close began
  // arrived before it, and is answered as usual.
  app.addHook("preValidation", (request, reply, done) => {
    if (!arrivedClosing.has(request)) return done();
    rpc.send(leaving(reply), new RpcError(RESOURCE_UNAVAILABLE, SHUTTING_DOWN, 503), rpc.idOf(request.body));
  });
}
