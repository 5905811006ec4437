import { type FastifyReply, type FastifyRequest, LogController } from "fastify";

/**
 * The sponsorship RPC (one info line per decision already says what matters) and the probes and scrapes of operators'
 * tooling would drown everything else at info: their per-request access lines are logged at debug. Every other route
 * keeps Fastify's info lines; errors stay at their level everywhere.
 */
const QUIET_ROUTES = /^\/(api\/v1\/|healthz(\?|$)|readyz(\?|$)|metrics(\?|$))/;

const isQuiet = (request: FastifyRequest) => QUIET_ROUTES.test(request.url);

export class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (isQuiet(request)) request.log.debug({ req: request }, "incoming request");
    else super.incomingRequest(request, reply, metadata);
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error || !isQuiet(request)) super.requestCompleted(error, request, reply, metadata);
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, "request completed");
  }
}
