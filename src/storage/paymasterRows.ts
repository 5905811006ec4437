// The rows a paymaster owns in one of the tables the management API lists (its contracts, rules and webhooks), in the
// order every list of them has: by creation, the id ordering rows created together. The whole list, or one page after
// a key, which the (paymaster_id, created_at, id) index of a paged table reads as one range scan.
import type { Queryable } from "./database";
import { AFTER_KEY, CREATED_MICROS, keyOfRow, keyParams, type PageKey } from "./pageKey";

type PaymasterTable = "smart_contracts" | "policies" | "webhooks";

/** All the paymaster's rows of `table`, `columns` selected. */
export function paymasterRows<Row>(
  db: Queryable,
  table: PaymasterTable,
  columns: string,
  paymasterId: string,
): Promise<Row[]> {
  return db.query<Row>(`SELECT ${columns} FROM ${table} WHERE paymaster_id = $1 ORDER BY created_at, id`, [
    paymasterId,
  ]);
}

/** Up to `limit` of the paymaster's rows of `table` after `after` (from the first without it), each with its key. */
export async function paymasterRowsPage<Row>(
  db: Queryable,
  table: PaymasterTable,
  columns: string,
  paymasterId: string,
  page: { after: PageKey | undefined; limit: number },
): Promise<{ row: Row; key: PageKey }[]> {
  const { after, limit } = page;
  const rows = await db.query<Row & { id: string; created_micros: string }>(
    `SELECT ${columns}, ${CREATED_MICROS} FROM ${table}
     WHERE paymaster_id = $1 ${after ? `AND ${AFTER_KEY}` : ""} ORDER BY created_at, id LIMIT ${after ? "$4" : "$2"}`,
    after ? [paymasterId, ...keyParams(after), limit] : [paymasterId, limit],
  );
  return rows.map((row) => ({ row, key: keyOfRow(row) }));
}
