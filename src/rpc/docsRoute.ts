import type { FastifyInstance } from "fastify";
import { openRpcDocument } from "./openrpc";

export const OPENRPC_PATH = "/openrpc.json";

/**
 * GET /openrpc.json: the RPC methods' description for client generators and playgrounds. Public, like the schemas it
 * holds, and outside the RPC prefix, whose every answer is a JSON-RPC envelope. Built once: it depends on code only.
 */
export function registerRpcDocs(app: FastifyInstance): void {
  const document = JSON.stringify(openRpcDocument());
  app.get(OPENRPC_PATH, async (_request, reply) =>
    reply
      .header("content-type", "application/json; charset=utf-8")
      .header("access-control-allow-origin", "*")
      .send(document),
  );
}
