import type { Queryable } from "./database";

/** What a management write records about itself before it changes anything (the rows it changes are added by the database). */
export interface AuditEntryStart {
  atMs: number;
  accountId: string;
  tokenId: string | null;
  tokenName: string | null;
  clientAddress: string;
  method: string;
  path: string;
  /** The paymaster the request named (its apiKey); a paymaster a write creates is filled in by the database. */
  paymasterId: string | null;
  /** What the request named: ids from its path and body. */
  target: Record<string, unknown>;
}

/** One row a write changed, secrets masked (migration 23's audit_row_view): the whole row, or the changed fields. */
export interface AuditChange {
  table: string;
  operation: "insert" | "update" | "delete";
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface AuditEntry extends Omit<AuditEntryStart, "paymasterId"> {
  id: string;
  paymasterId: string | null;
  changes: AuditChange[];
}

/**
 * Opens the audit entry of a write inside the write's transaction `tx` and names it to the database's triggers for the
 * rest of that transaction only: every row the write changes then joins this entry, and the entry commits with them.
 */
export async function startAuditEntry(tx: Queryable, entry: AuditEntryStart): Promise<string> {
  const [row] = await tx.query<{ id: string | number }>(
    `INSERT INTO audit_log (at_ms, account_id, token_id, token_name, client_address, method, path, paymaster_id, target)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
    [
      entry.atMs,
      entry.accountId,
      entry.tokenId,
      entry.tokenName,
      entry.clientAddress,
      entry.method,
      entry.path,
      entry.paymasterId,
      JSON.stringify(entry.target),
    ],
  );
  const id = String(row?.id);
  await tx.query("SELECT set_config('paymaster.audit_entry', $1, true)", [id]);
  return id;
}

export interface AuditQuery {
  accountId: string;
  paymasterId?: string;
  tokenId?: string;
  /** Entries at or after this time (ms). */
  fromMs?: number;
  /** Entries before this time (ms). */
  toMs?: number;
  /** Entries older than the one with this id (the previous page's last). */
  beforeId?: string;
  limit: number;
}

interface AuditRow {
  id: string | number;
  at_ms: string | number;
  account_id: string;
  token_id: string | null;
  token_name: string | null;
  client_address: string;
  method: string;
  path: string;
  paymaster_id: string | null;
  target: Record<string, unknown>;
  changes: AuditChange[];
}

/** An account's entries, newest first (by id: the order they were opened in), filtered and one page long. */
export async function listAuditEntries(db: Queryable, query: AuditQuery): Promise<AuditEntry[]> {
  const conditions = ["account_id = $1"];
  const params: unknown[] = [query.accountId];
  const add = (condition: string, value: unknown) => {
    params.push(value);
    conditions.push(condition.replace("?", `$${params.length}`));
  };
  if (query.paymasterId !== undefined) add("paymaster_id = ?", query.paymasterId);
  if (query.tokenId !== undefined) add("token_id = ?", query.tokenId);
  if (query.fromMs !== undefined) add("at_ms >= ?", query.fromMs);
  if (query.toMs !== undefined) add("at_ms < ?", query.toMs);
  if (query.beforeId !== undefined) add("id < ?", query.beforeId);
  params.push(query.limit);
  const rows = await db.query<AuditRow>(
    `SELECT id, at_ms, account_id, token_id, token_name, client_address, method, path, paymaster_id, target, changes
     FROM audit_log WHERE ${conditions.join(" AND ")} ORDER BY id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map((row) => ({
    id: String(row.id),
    atMs: Number(row.at_ms),
    accountId: row.account_id,
    tokenId: row.token_id,
    tokenName: row.token_name,
    clientAddress: row.client_address,
    method: row.method,
    path: row.path,
    paymasterId: row.paymaster_id,
    target: row.target,
    changes: row.changes,
  }));
}
