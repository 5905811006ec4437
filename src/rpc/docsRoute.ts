import type { FastifyInstance, FastifyRequest } from "fastify";
import { openRpcDocument } from "./openrpc";

export const OPENRPC_PATH = "/openrpc.json";

/** Stands for the origin in the document built once; no schema or text of the document contains it. */
const ORIGIN_MARK = "https://origin.invalid";

/**
 * GET /openrpc.json: the RPC methods' description for client generators and playgrounds. Public, like the schemas it
 * holds, and outside the RPC prefix, whose every answer is a JSON-RPC envelope. Built once, as it depends on code
 * only, but for its server URL: that names the origin the document was fetched from.
 */
export function registerRpcDocs(app: FastifyInstance): void {
  const document = JSON.stringify(openRpcDocument(ORIGIN_MARK));
  app.get(OPENRPC_PATH, async (request, reply) => {
    const origin = requestOrigin(request);
    if (origin === undefined) {
      return reply.status(400).send({
        statusCode: 400,
        message:
          "The Host header (or X-Forwarded-Host and X-Forwarded-Proto from a trusted proxy) is not an http(s) origin",
      });
    }
    return reply
      .header("content-type", "application/json; charset=utf-8")
      .header("access-control-allow-origin", "*")
      .send(document.replaceAll(ORIGIN_MARK, origin));
  });
}

/**
 * The scheme and host the client used: Fastify reads them from X-Forwarded-Proto and X-Forwarded-Host only when the
 * connection comes from a proxy TRUST_PROXY believes, else from the connection and the Host header. Only a bare http(s)
 * host and port is an origin: not a path, a query, credentials or nothing.
 */
function requestOrigin(request: FastifyRequest): string | undefined {
  const { protocol, host } = request;
  if ((protocol !== "http" && protocol !== "https") || host === "" || /[/?#@\\\s]/.test(host)) return undefined;
  try {
    return new URL(`${protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}
