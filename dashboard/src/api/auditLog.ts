import { api, unwrap } from "./client";
import type { paths } from "./schema";

type AuditLog = paths["/api/v2/public/sdk/audit-log"]["get"]["responses"][200]["content"]["application/json"];

/** One management write as the audit log keeps it (the API's own type, generated). */
export type AuditEntry = AuditLog["data"][number];

export interface AuditFilters {
  paymasterId?: string;
  from?: string;
  to?: string;
}

/** A page of the account's audit log, newest first. */
export async function auditPage(
  filters: AuditFilters,
  cursor: string | undefined,
): Promise<{ entries: AuditEntry[]; nextCursor: string | null }> {
  const query = { ...filters, limit: "20", ...(cursor ? { cursor } : {}) };
  const answer = api.GET("/api/v2/public/sdk/audit-log", { params: { query } });
  const entries = await unwrap(answer);
  return { entries, nextCursor: (await answer).data?.nextCursor ?? null };
}
