/**
 * Where a page of a list ends: the last row's creation time, in whole microseconds since the epoch (the column's own
 * precision, so no row is skipped or repeated through rounding), and its id, which orders rows created in the same
 * microsecond (rows of one transaction share `now()`).
 */
export interface PageKey {
  createdMicros: bigint;
  id: string;
}

/** The selected column that carries a row's creation time as `createdMicros` (text: exact on every driver). */
export const CREATED_MICROS = "(extract(epoch FROM created_at) * 1000000)::bigint::text AS created_micros";

/** Rows after `after` in the order created_at, id; `$2` and `$3` are the key's values (see keyParams). */
export const AFTER_KEY = "(created_at, id) > ($2::timestamptz, $3::uuid)";

/** The latest instant a key may name: the end of year 9999, beyond which the timestamp text below would not parse. */
export const MAX_CREATED_MICROS = 253_402_300_799_999_999n;

/**
 * The key as query parameters. The instant is written as an ISO text that PostgreSQL reads exactly to the microsecond
 * (a JavaScript Date stops at milliseconds, so the last three digits are added by hand).
 */
export function keyParams(key: PageKey): [string, string] {
  const millis = key.createdMicros / 1000n;
  const micros = (key.createdMicros % 1000n).toString().padStart(3, "0");
  const iso = new Date(Number(millis)).toISOString().replace("Z", `${micros}Z`);
  return [iso, key.id];
}

export const keyOfRow = (row: { id: string; created_micros: string }): PageKey => ({
  createdMicros: BigInt(row.created_micros),
  id: row.id,
});
