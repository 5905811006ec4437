import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { TSchema } from "typebox";
import type { ManagementContext, UrlCheck } from "../actions/managementContext";
import type { AppContext } from "../context";
import { RequestValidationError } from "../errors";
import { problemOf } from "../schemas/validate";
import { AmbientTransactions } from "../storage/ambientTransaction";
import type { Credentials } from "./credentialCache";
import { requireCallableUrl } from "./webhookUrl";

/** What the management routes are built from: the app's context and the use cases' view of it. */
export interface Management {
  ctx: AppContext;
  actions: ManagementContext;
  /** Who a token and an apiKey are, from the credential cache or the database. */
  credentials: Credentials;
  /** The write transactions the use cases join (`actions.db`), each with its audit entry (src/http/auditedWrites.ts). */
  transactions: AmbientTransactions;
}

/** How the part of the request a refused value came from is named in the message. */
const PART_LABELS: Record<string, string> = {
  body: "Request body",
  querystring: "Query string",
  params: "Path",
  headers: "Headers",
};

/**
 * Fastify validates every management request against the route's TypeBox schemas; a refused one is a 400 of the
 * ApiError family (RequestValidationError) whose message names the field and the problem. Answers are written as the
 * handlers shape them: the response schemas document them (GET /openapi.json) and are not used to filter them.
 */
export function useManagementSchemas(api: FastifyInstance): FastifyInstance {
  api.setValidatorCompiler<TSchema>(({ schema, httpPart }) => {
    const label = PART_LABELS[httpPart ?? "body"] ?? "Request";
    return (value: unknown) => {
      const problem = problemOf(schema, value, label);
      return problem === undefined ? { value } : { error: new RequestValidationError(problem) };
    };
  });
  api.setSerializerCompiler(() => (data) => JSON.stringify(data));
  return api;
}

export const typed = (api: FastifyInstance) => api.withTypeProvider<TypeBoxTypeProvider>();

/**
 * Credentials are checked before the request is validated, so that a request without them gets its 401 whatever its
 * body. The guard keeps what it found for the handler.
 */
export function guard<T>(check: (request: FastifyRequest) => Promise<T>) {
  const found = new WeakMap<object, T>();
  return {
    preValidation: async (request: FastifyRequest) => {
      found.set(request, await check(request));
    },
    of(request: object): T {
      const value = found.get(request);
      if (value === undefined) throw new Error("the route's credentials were not checked before its handler");
      return value;
    },
  };
}

/** PATCH and DELETE that name their record in the body: no body at all reads as an empty object. */
export async function noBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) request.body = {};
}

/** The webhook URL check of this app (its own addresses, the webhook settings). */
export const urlCheckOf =
  (app: FastifyInstance, ctx: AppContext): UrlCheck =>
  (url, field) =>
    requireCallableUrl(app, ctx, url, field);

/**
 * The management routes' dependencies; `setupChanged` forgets a paymaster's cached sponsorship setup, `alertsChanged`
 * what the alerts remember of its settings.
 */
export function managementOf(
  ctx: AppContext,
  credentials: Credentials,
  setupChanged: (apiKey: string) => void,
  alertsChanged?: (paymasterId: string) => void,
): Management {
  const transactions = new AmbientTransactions(ctx.db);
  return {
    ctx,
    credentials,
    transactions,
    actions: {
      db: transactions.database,
      background: ctx.db,
      chains: ctx.chains,
      now: () => ctx.now(),
      setupChanged,
      alertsChanged,
    },
  };
}
