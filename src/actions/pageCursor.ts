import { badRequest } from "../errors";
import { DEFAULT_PAGE_SIZE } from "../schemas/management/paging";
import { MAX_CREATED_MICROS, type PageKey } from "../storage/pageKey";

/**
 * Which of a list's parts a key belongs to: the rule list is the rules and then the whitelisted contracts, each in its
 * own creation order, so its cursor says which part it stopped in. The sponsorship ledger is one part, newest first,
 * as is an event endpoint's list of delivery attempts.
 */
export type ListPart = "policy" | "contract" | "sponsorship" | "attempt";

export interface PageCursor {
  part: ListPart;
  key: PageKey;
}

export interface PageRequest {
  limit: number;
  after: PageCursor | undefined;
}

const PART_CODES: Record<ListPart, string> = { policy: "p", contract: "c", sponsorship: "s", attempt: "a" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MICROS = /^\d{1,18}$/;

/** Opaque to clients: base64url of the part, the creation instant in microseconds and the id of the page's last row. */
function encodeCursor(cursor: PageCursor): string {
  const text = `${PART_CODES[cursor.part]}.${cursor.key.createdMicros}.${cursor.key.id}`;
  return Buffer.from(text, "utf8").toString("base64url");
}

const notACursor = () => badRequest("cursor must be the nextCursor of a previous page of this list");

/** Reads a client's cursor; anything this service did not write is the client's 400, never a database error. */
function decodeCursor(cursor: string, parts: readonly ListPart[]): PageCursor {
  const [code, micros, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  const part = parts.find((candidate) => PART_CODES[candidate] === code);
  if (!part || rest.length > 0 || !micros || !MICROS.test(micros) || !id || !UUID.test(id)) throw notACursor();
  const createdMicros = BigInt(micros);
  if (createdMicros > MAX_CREATED_MICROS) throw notACursor();
  return { part, key: { createdMicros, id } };
}

/**
 * The page a query asks for, or undefined when it names neither `limit` nor `cursor` (the whole list, as the
 * interface fixes it). The schema has already checked that `limit` is a whole number from 1 to 500.
 */
export function pageRequestOf(
  query: { limit?: string; cursor?: string },
  parts: readonly ListPart[],
): PageRequest | undefined {
  if (query.limit === undefined && query.cursor === undefined) return undefined;
  return {
    limit: query.limit === undefined ? DEFAULT_PAGE_SIZE : Number(query.limit),
    after: query.cursor === undefined ? undefined : decodeCursor(query.cursor, parts),
  };
}

/** The page a query asks for, the first of DEFAULT_PAGE_SIZE rows when it names neither (a list always paged). */
export function alwaysPaged(query: { limit?: string; cursor?: string }, part: ListPart): PageRequest {
  return pageRequestOf(query, [part]) ?? { limit: DEFAULT_PAGE_SIZE, after: undefined };
}

/** A page of a list and the cursor of the next one (null after the last). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/**
 * Cuts `limit + 1` rows read in order into the page and its next cursor: the extra row only says that more follow.
 */
export function pageOf<T>(rows: { item: T; cursor: PageCursor }[], limit: number): Page<T> {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map((row) => row.item),
    nextCursor: rows.length > limit && last ? encodeCursor(last.cursor) : null,
  };
}
