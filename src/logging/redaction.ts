import type { FastifyRequest } from "fastify";

/** What stands in for a secret in a log line or an error message. */
const REDACTED = "[redacted]";

/** Query parameters that carry a credential when a client puts one in the URL (compared lower-case, without - or _). */
const SECRET_PARAMETERS = new Set(["authtoken", "apikey", "token", "xadminsecret"]);

/** The RPC prefix, in any case and with repeated slashes: the router refuses those, but a 404 line still shows them. */
const RPC_PATH = /^(\/+api\/+v1\/+)(.*)$/i;

/**
 * A URL as logs and error messages may show it. The sponsorship endpoint's path carries the apiKey, its only
 * credential: everything after `/api/v1/` is replaced except a numeric chain id (`/api/v1/31337/[redacted]`). Query
 * values of authToken, apiKey and the like are replaced too. Nothing is decoded, so the result is the URL as sent.
 */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf("?");
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const query = queryAt === -1 ? undefined : url.slice(queryAt + 1);
  return query === undefined ? redactPath(path) : `${redactPath(path)}?${redactQuery(query)}`;
}

function redactPath(path: string): string {
  const rpc = RPC_PATH.exec(path);
  if (!rpc) return path;
  const [, prefix, rest] = rpc as unknown as [string, string, string];
  if (rest === "") return path;
  const chain = /^\d{1,20}(?=\/|$)/.exec(rest)?.[0];
  if (chain === undefined) return `${prefix}${REDACTED}`;
  return rest.length > chain.length + 1 ? `${prefix}${chain}/${REDACTED}` : `${prefix}${rest}`;
}

function redactQuery(query: string): string {
  return query
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return isSecretParameter(name) ? `${name}=${REDACTED}` : pair;
    })
    .join("&");
}

function isSecretParameter(encodedName: string): boolean {
  let name = encodedName;
  try {
    name = decodeURIComponent(encodedName.replace(/\+/g, " "));
  } catch {
    // A badly encoded name is compared as sent.
  }
  return SECRET_PARAMETERS.has(name.toLowerCase().replace(/[-_\s]/g, ""));
}

/** Fastify's request log fields, with the URL redacted (the default serializer logs it as sent). */
export function redactedRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
