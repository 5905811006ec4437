import type { FastifyInstance } from "fastify";
import { auditLogOf } from "../actions/auditLog";
import { auditLogSchema } from "../schemas/management/auditLog";
import { accountGuard } from "./auth";
import { type Management, typed } from "./management";

/** GET audit-log: the account's management writes, newest first. */
export function auditLogRoutes(app: FastifyInstance, { actions, credentials }: Management): void {
  const api = typed(app);
  const account = accountGuard(credentials);
  api.get("/audit-log", { schema: auditLogSchema, preValidation: account.preValidation }, async (request) => {
    const page = await auditLogOf(actions.db, account.of(request).id, request.query);
    return { statusCode: 200, message: "Audit log fetched", data: page.entries, nextCursor: page.nextCursor };
  });
}
