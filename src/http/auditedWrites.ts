import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from "fastify";
import type { AmbientTransactions } from "../storage/ambientTransaction";
import { startAuditEntry } from "../storage/auditLog";
import { isStorableText } from "../storage/storableText";
import { callerOf } from "./auth";

/** Methods that change something: each route with one of them is an audited write. */
const WRITING_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/** Body fields that name what a write is about (ids, the kind of change); nothing else of the body is copied. */
const TARGET_FIELDS = ["paymasterId", "policyId", "webhookId", "tokenId", "address", "name", "type", "policyType"];

/** The audited routes of each app, by its HTTP server ("METHOD url"), for the check that every write is one. */
const auditedRoutes = new WeakMap<object, string[]>();

export const auditedRoutesOf = (app: FastifyInstance): readonly string[] => auditedRoutes.get(app.server) ?? [];

/** A write that answered a 4xx itself (rather than throwing): its changes are undone with the transaction. */
class AnsweredRefusal {
  constructor(readonly payload: unknown) {}
}

/** Longest text of a target kept in the entry, in code points: ids and names are short; anything longer is cut. */
const MAX_TARGET_TEXT = 200;

/**
 * A value as the entry can hold it: text the database cannot store (U+0000, a lone surrogate: a hostile id that will
 * be refused as unknown anyway) must not turn the write into a database error, so it is shown as JSON escapes.
 */
function storable(value: unknown): unknown {
  if (typeof value !== "string") return value;
  // JSON's own escapes (\\u0000, \\ud800) are plain storable characters.
  const text = isStorableText(value) ? value : JSON.stringify(value).slice(1, -1);
  // Cut by code points: a cut inside a surrogate pair would make the text unstorable again.
  return text.length <= MAX_TARGET_TEXT ? text : Array.from(text).slice(0, MAX_TARGET_TEXT).join("");
}

/** The ids a request names: its path parameters and the naming fields of its body. */
function targetOf(request: FastifyRequest): Record<string, unknown> {
  const target: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((request.params as Record<string, unknown> | undefined) ?? {})) {
    target[key] = storable(value);
  }
  const body = request.body;
  if (body && typeof body === "object" && !Array.isArray(body)) {
    for (const field of TARGET_FIELDS) {
      const value = (body as Record<string, unknown>)[field];
      if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
        target[field] = storable(value);
      }
    }
  }
  return target;
}

/**
 * Makes every write route registered after it on `api` an audited write: its handler runs in one transaction that the
 * use cases join (`transactions`), which first opens the write's audit entry (who, from where, what it names) and in
 * which the database adds each row the write changes to that entry (migration 23). A write that throws or answers a
 * 4xx/5xx rolls back with its entry: a change without its entry, or an entry without its change, cannot be committed.
 *
 * Hooked on the routes rather than written in each handler, so that a new write route is audited without remembering
 * to: test/http/auditLog.test.ts checks that the audited routes are the write routes of the OpenAPI document.
 */
export function auditWrites(api: FastifyInstance, transactions: AmbientTransactions, now: () => number): void {
  const audited = auditedRoutes.get(api.server) ?? [];
  auditedRoutes.set(api.server, audited);
  api.addHook("onRoute", (route) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => WRITING_METHODS.has(method))) return;
    for (const method of methods) audited.push(`${method} ${route.url}`);
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function audited(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const caller = callerOf(request);
      // Every management write has a guard that names its caller; one without would be a route mistake, not a write
      // to leave out of the log.
      if (!caller) throw new Error(`the write route ${request.method} ${route.url} has no caller to audit`);
      try {
        return await transactions.run(async (tx) => {
          await startAuditEntry(tx, {
            atMs: now(),
            accountId: caller.account.id,
            tokenId: caller.account.token.id,
            tokenName: caller.account.token.name,
            clientAddress: request.ip,
            method: request.method,
            path: request.url.split("?")[0] ?? request.url,
            paymasterId: caller.paymaster?.id ?? null,
            target: targetOf(request),
          });
          const payload = await handler.call(this, request, reply);
          if (reply.statusCode >= 400) throw new AnsweredRefusal(payload);
          return payload;
        });
      } catch (error) {
        if (error instanceof AnsweredRefusal) return error.payload;
        throw error;
      }
    };
  });
}
