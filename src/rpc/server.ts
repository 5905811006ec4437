import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import {
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  ORIGIN_NOT_ALLOWED,
  PARSE_ERROR,
  QuotaExceededError,
  RpcError,
  SPONSORSHIP_REFUSED,
  UNKNOWN_PAYMASTER,
} from "../errors";
import { noteRejectedCredential } from "../http/failureThrottle";
import type { Metrics } from "../metrics/metrics";
import type { SponsorDeps } from "../sponsorship/engine";
import type { SetupCache } from "../sponsorship/setupCache";
import type { QuotaCounter } from "../storage/quotaCounter";
import { type OriginVerdict, originVerdict } from "./allowedOrigins";
import { recordDecision } from "./decisionRecord";
import type { DecisionNote, RpcMethod } from "./methodContext";
import { pm_getFeeQuoteOrData } from "./pm_getFeeQuoteOrData";
import { pm_getPaymasterData } from "./pm_getPaymasterData";
import { pm_getPaymasterStubData } from "./pm_getPaymasterStubData";
import { pm_sponsorUserOperation } from "./pm_sponsorUserOperation";
import { toWireError } from "./wireError";

const RPC_PREFIX = "/api/v1/";
export const RPC_PATH = `${RPC_PREFIX}:chainId/:apiKey`;

/** Whether a URL, as sent, is under the RPC prefix: every answer there is a JSON-RPC envelope. */
export const isRpcUrl = (url: string) => url.startsWith(RPC_PREFIX);

/**
 * The methods by name; the misspelling `pm_getFeeQuotesOrData` is what some clients send, and the two ERC-7677 methods
 * are what viem's createPaymasterClient calls.
 */
const METHODS: Record<string, RpcMethod> = {
  pm_sponsorUserOperation,
  pm_getFeeQuoteOrData,
  pm_getFeeQuotesOrData: pm_getFeeQuoteOrData,
  pm_getPaymasterStubData,
  pm_getPaymasterData,
};

/** The names the endpoint answers to; the OpenRPC document (openrpc.ts) describes exactly these. */
export const RPC_METHOD_NAMES: readonly string[] = Object.keys(METHODS);

export interface RpcDeps {
  setups: SetupCache;
  chains: ReadonlyMap<number, SponsoringChain>;
  sponsor: SponsorDeps;
  /** Where the paymasters' RATE_LIMIT quotas are counted. */
  quotas: QuotaCounter;
  metrics?: Metrics;
}

type Id = string | number | null;

const CORS_HEADERS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "POST, OPTIONS",
  "access-control-allow-headers": "content-type, accept",
  "access-control-max-age": "86400",
};

/** The JSON-RPC endpoint wallets call directly, browsers included: its own body parsing, errors and CORS. */
export async function rpcRoutes(app: FastifyInstance, deps: RpcDeps): Promise<void> {
  // Browsers post as text/plain to avoid a preflight; the body is JSON all the same.
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.addContentTypeParser("text/plain", { parseAs: "string" }, (request, body, done) =>
    parseJson(request, body as string, done),
  );
  // The paymaster's origin settings, once its apiKey is resolved: until then (an unknown apiKey, a malformed frame)
  // every origin may read the error, as before origins could be set.
  const verdicts = new WeakMap<FastifyRequest, OriginVerdict>();
  // A callback hook, not an async one: an async hook costs every answer a promise.
  app.addHook("onSend", (request, reply, payload, done) => {
    reply.headers(CORS_HEADERS);
    const verdict = verdicts.get(request);
    if (verdict) {
      if (verdict.varies) reply.header("vary", "Origin");
      if (verdict.allowed) reply.header("access-control-allow-origin", verdict.allowOrigin);
      else reply.removeHeader("access-control-allow-origin");
    }
    done(null, payload);
  });
  /** The verdict of the request's Origin for the paymaster it names, remembered for the answer's CORS headers. */
  const judgeOrigin = (request: FastifyRequest, setup: Parameters<typeof originVerdict>[0]) => {
    const verdict = originVerdict(setup, request.headers.origin);
    verdicts.set(request, verdict);
    if (!verdict.allowed) throw new RpcError(ORIGIN_NOT_ALLOWED, verdict.message, 403);
  };
  app.setErrorHandler((error: Error & { code?: string; statusCode?: number }, request, reply) => {
    // Only body parsing and size errors reach here: the handler answers everything else itself.
    if (error.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
      return send(reply, null, new RpcError(INVALID_REQUEST, "Invalid request: the body is too large"));
    }
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
      return send(reply, null, new RpcError(INVALID_REQUEST, "Invalid request: Content-Type must be application/json"));
    }
    if (error instanceof SyntaxError || error.statusCode === 400) {
      return send(reply, null, new RpcError(PARSE_ERROR, "Parse error: the body is not valid JSON"));
    }
    request.log.error({ err: error }, "rpc request failed");
    return reply.status(500).send({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error" } });
  });

  // A preflight from an origin the paymaster does not list is answered 403 without Access-Control-Allow-Origin, so
  // the browser never sends the request; an unknown apiKey is left to the request itself to refuse.
  app.options<{ Params: { chainId: string; apiKey: string } }>(RPC_PATH, async (request, reply) => {
    const { apiKey } = request.params;
    const setup = apiKey.length <= 128 ? await deps.setups.get(apiKey, deps.sponsor.now()) : undefined;
    try {
      if (setup) judgeOrigin(request, setup);
    } catch (error) {
      if (error instanceof RpcError) return send(reply, null, error);
      throw error;
    }
    return reply.status(204).send();
  });

  app.post<{ Params: { chainId: string; apiKey: string } }>(RPC_PATH, async (request, reply) => {
    const body = request.body as Record<string, unknown> | undefined;
    const id = validId(body?.id);
    try {
      const { method, params } = frame(body);
      const ctx = await resolvePath(deps, request.params, () => noteRejectedCredential(request));
      // Before anything else of the paymaster's: another web page's call costs no quota and no work.
      judgeOrigin(request, ctx.setup);
      const handler = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
      if (!handler) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 64)}`);
      const startedMs = performance.now();
      // Before the method reads anything: a paused paymaster signs nothing, records nothing and reserves nothing. It
      // is counted as a refusal like the rules' own, with the mode unread.
      if (ctx.setup.paused) {
        const error = new RpcError(SPONSORSHIP_REFUSED, pausedMessage(ctx.setup));
        const note: DecisionNote = { mode: "unknown", refusedBy: "paused" };
        recordDecision(deps.metrics, request.log, { note, ...ctx, startedMs, error });
        throw error;
      }
      const decision: DecisionNote = {};
      const methodContext = {
        ...ctx,
        deps: deps.sponsor,
        log: request.log,
        decision,
        metrics: deps.metrics,
        // request.ip honours TRUST_PROXY (Fastify's trustProxy), as the wrong-credential throttle does.
        client: { ip: request.ip, origin: request.headers.origin },
        quotas: deps.quotas,
      };
      let result: unknown;
      try {
        result = await handler(params, methodContext);
      } catch (thrown) {
        const error = toWireError(thrown, ctx.chain, request.log);
        recordDecision(deps.metrics, request.log, { note: decision, ...ctx, startedMs, error });
        throw error;
      }
      recordDecision(deps.metrics, request.log, { note: decision, ...ctx, startedMs });
      return reply.send({ jsonrpc: "2.0", id, result });
    } catch (error) {
      if (error instanceof RpcError) return send(reply, id, error);
      request.log.error({ err: error }, "rpc method failed");
      return reply.status(500).send({ jsonrpc: "2.0", id, error: { code: -32603, message: "Internal error" } });
    }
  });
}

function send(reply: FastifyReply, id: Id, error: RpcError) {
  if (error instanceof QuotaExceededError) reply.header("retry-after", String(error.retryAfterSeconds));
  return reply
    .status(error.httpStatus)
    .send({ jsonrpc: "2.0", id, error: { code: error.code, message: error.message } });
}

/**
 * An error answered under the RPC prefix outside its route (a URL the router cannot decode, no such route, a shutdown
 * under way): the same
 * envelope and CORS headers as the route's own answers, so a browser wallet can read it.
 */
export function sendOutsideRoute(reply: FastifyReply, error: RpcError, id: Id = null) {
  return send(reply.headers(CORS_HEADERS), id, error);
}

/** The id of a parsed request body as an answer echoes it (null when there is none to echo). */
export const rpcIdOf = (body: unknown): Id => validId((body as { id?: unknown } | undefined)?.id);

/** The id is echoed with its JSON type; anything that is not a string or a number is answered as null. */
function validId(id: unknown): Id {
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

function frame(body: unknown): { method: string; params: unknown[] } {
  if (Array.isArray(body)) throw new RpcError(INVALID_REQUEST, "Invalid request: batch requests are not supported");
  if (typeof body !== "object" || body === null) {
    throw new RpcError(INVALID_REQUEST, "Invalid request: the body must be a JSON-RPC request object");
  }
  const { jsonrpc, id, method, params } = body as Record<string, unknown>;
  if (jsonrpc !== "2.0" && jsonrpc !== "2.0.0")
    throw new RpcError(INVALID_REQUEST, 'Invalid request: jsonrpc must be "2.0"');
  if (id !== undefined && id !== null && validId(id) === null) {
    throw new RpcError(INVALID_REQUEST, "Invalid request: id must be a string or a number");
  }
  if (typeof method !== "string" || method === "") {
    throw new RpcError(INVALID_REQUEST, "Invalid request: method must be a non-empty string");
  }
  if (!Array.isArray(params)) throw new RpcError(INVALID_PARAMS, "params must be an array");
  return { method, params };
}

/**
 * The path is the endpoint's only authentication (no client sends a header): the apiKey and its chain. An unknown
 * apiKey counts for the throttle of wrong credentials; an unsupported chain or a chain mismatch does not.
 */
/** Names the paymaster by its id, and by the dApp's name for it when the setup has one. */
const pausedMessage = (setup: { paymasterId: string; name?: string }) =>
  setup.name === undefined
    ? `Paymaster ${setup.paymasterId} is paused`
    : `Paymaster "${setup.name}" (${setup.paymasterId}) is paused`;

async function resolvePath(deps: RpcDeps, path: { chainId: string; apiKey: string }, rejected: () => void) {
  const chainId = /^\d{1,15}$/.test(path.chainId) ? Number(path.chainId) : undefined;
  const chain = chainId === undefined ? undefined : deps.chains.get(chainId);
  if (!chain) {
    throw new RpcError(UNKNOWN_PAYMASTER, `Chain ${path.chainId.slice(0, 20)} is not supported`, 404);
  }
  const nowMs = deps.sponsor.now();
  const found = path.apiKey.length <= 128 ? await deps.setups.get(path.apiKey, nowMs) : undefined;
  // A key a rotation replaced is unknown once its grace period ends, even while its setup is still cached.
  const setup = found && (found.apiKeyUntilMs == null || found.apiKeyUntilMs > nowMs) ? found : undefined;
  if (!setup) {
    rejected();
    throw new RpcError(UNKNOWN_PAYMASTER, "Unknown apiKey: no paymaster has this key", 401);
  }
  if (setup.chainId !== chain.chainId) {
    throw new RpcError(
      UNKNOWN_PAYMASTER,
      `This apiKey's paymaster is on chain ${setup.chainId}, not on chain ${chain.chainId}`,
      404,
    );
  }
  return { setup, chain };
}
