import type { FastifyReply } from "fastify";
import { INVALID_REQUEST, RpcError } from "../errors";
import { RPC_PATH, sendOutsideRoute } from "./server";

/** A request under the RPC prefix that no route takes, refused as a JSON-RPC invalid request saying why. */
export function refuseUnroutedRpc(reply: FastifyReply, reason: string, statusCode?: number) {
  return sendOutsideRoute(reply, new RpcError(INVALID_REQUEST, `Invalid request: ${reason}`, statusCode));
}

/** A path under the RPC prefix with no route (`route`: the method and the redacted URL): 404, naming the one route. */
export function refuseNoRpcRoute(reply: FastifyReply, route: string) {
  const only = `POST ${RPC_PATH.replace(":chainId", "{chainId}").replace(":apiKey", "{apiKey}")}`;
  return refuseUnroutedRpc(reply, `no route ${route}; use ${only}`, 404);
}
