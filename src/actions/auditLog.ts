import { badRequest } from "../errors";
import type { AuditLogQuery } from "../schemas/management/auditLog";
import { isoTimeMs } from "../schemas/management/isoTime";
import { DEFAULT_PAGE_SIZE } from "../schemas/management/paging";
import { listAuditEntries } from "../storage/auditLog";
import type { Queryable } from "../storage/database";

/** The cursor: base64url of "audit." and the id of the page's last entry (entries older than it follow). */
const CURSOR_PREFIX = "audit.";

const encodeCursor = (id: string) => Buffer.from(`${CURSOR_PREFIX}${id}`, "utf8").toString("base64url");

function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const id = text.startsWith(CURSOR_PREFIX) ? text.slice(CURSOR_PREFIX.length) : "";
  if (!/^\d{1,18}$/.test(id)) throw badRequest("cursor must be the nextCursor of a previous page of this list");
  return id;
}

const millisOf = (field: string, value: string | undefined) =>
  value === undefined ? undefined : isoTimeMs(field, value);

/** One page of the account's audit log, newest first, and the cursor of the next page (null after the last). */
export async function auditLogOf(db: Queryable, accountId: string, query: AuditLogQuery) {
  const limit = query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit);
  const rows = await listAuditEntries(db, {
    accountId,
    paymasterId: query.paymasterId?.toLowerCase(),
    tokenId: query.tokenId?.toLowerCase(),
    fromMs: millisOf("from", query.from),
    toMs: millisOf("to", query.to),
    beforeId: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    entries: page.map(({ atMs, ...entry }) => ({ ...entry, time: new Date(atMs).toISOString() })),
    nextCursor: rows.length > limit && last ? encodeCursor(last.id) : null,
  };
}
