import { randomBytes, randomUUID } from "node:crypto";
import type { Queryable } from "./database";
import { isStorableText } from "./storableText";

export interface Paymaster {
  id: string;
  accountId: string;
  name: string;
  chainId: number;
  type: string;
  version: string;
  apiKey: string;
  fundingAddress: string | null;
  /** false while the dApp has paused the whole paymaster. */
  active: boolean;
  /** ERC-7677's sponsor: what wallets show as paying; null until set. */
  sponsor: SponsorInfo | null;
  /** The web origins browsers may call the RPC URL from, lower case; empty: any origin. */
  allowedOrigins: string[];
  /** Calls without an Origin header are refused too. */
  requireOrigin: boolean;
  /** How many blocks an EntryPoint v0.9 signature stays valid (a window in block numbers); null: seconds. */
  validityBlocks: number | null;
}

/** The name a wallet shows as the sponsor of an operation, and its icon (an RFC 2397 data URI), if any. */
export interface SponsorInfo {
  name: string;
  icon?: string;
}

export interface PaymasterRow {
  id: string;
  account_id: string;
  name: string;
  chain_id: string | number;
  type: string;
  version: string;
  api_key: string;
  funding_address: string | null;
  active: boolean;
  sponsor_name: string | null;
  sponsor_icon: string | null;
  allowed_origins: string[];
  require_origin: boolean;
  validity_blocks: number | null;
}

const COLUMNS =
  "id, account_id, name, chain_id, type, version, api_key, funding_address, active, sponsor_name, sponsor_icon, " +
  "allowed_origins, require_origin, validity_blocks";

const toPaymaster = (row: PaymasterRow): Paymaster => ({
  id: row.id,
  accountId: row.account_id,
  name: row.name,
  chainId: Number(row.chain_id),
  type: row.type,
  version: row.version,
  apiKey: row.api_key,
  fundingAddress: row.funding_address,
  active: row.active,
  sponsor: sponsorOf(row),
  allowedOrigins: row.allowed_origins,
  requireOrigin: row.require_origin,
  validityBlocks: row.validity_blocks,
});

/** The sponsor columns as ERC-7677 gives them: no name, no sponsor. */
export function sponsorOf(row: { sponsor_name: string | null; sponsor_icon: string | null }): SponsorInfo | null {
  if (row.sponsor_name === null) return null;
  return row.sponsor_icon === null ? { name: row.sponsor_name } : { name: row.sponsor_name, icon: row.sponsor_icon };
}

/** An account's paymasters have distinct names per chain (a UniqueViolation of this constraint otherwise). */
export const PAYMASTER_NAME_PER_CHAIN = "paymasters_name_per_chain";

export async function insertPaymaster(
  db: Queryable,
  fields: { accountId: string; name: string; chainId: number; type: string; version: string },
): Promise<Paymaster> {
  // The apiKey travels in URLs that browsers call, so it is an identifier, not a secret: it is stored as is.
  const apiKey = randomBytes(24).toString("base64url");
  const rows = await db.query<PaymasterRow>(
    `INSERT INTO paymasters (id, account_id, name, chain_id, type, version, api_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
    [randomUUID(), fields.accountId, fields.name, fields.chainId, fields.type, fields.version, apiKey],
  );
  return toPaymaster(rows[0] as PaymasterRow);
}

export async function listPaymasters(db: Queryable, accountId: string): Promise<Paymaster[]> {
  const rows = await db.query<PaymasterRow>(
    `SELECT ${COLUMNS} FROM paymasters WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return rows.map(toPaymaster);
}

/** A paymaster as an apiKey named it: until when that key names it (null: the current key, for good). */
export type KeyedPaymaster = Paymaster & { apiKeyUntilMs: number | null };

/**
 * The account is part of the key: another account's apiKey is simply not found. The key replaced by a rotation names
 * its paymaster until its grace ends at `nowMs`; the caller keeps `apiKeyUntilMs` to stop trusting it then.
 */
export async function findPaymasterByApiKey(
  db: Queryable,
  accountId: string,
  apiKey: string,
  nowMs: number,
): Promise<KeyedPaymaster | undefined> {
  if (!isStorableText(apiKey)) return undefined;
  const rows = await db.query<PaymasterRow & { key_until_ms: string | number | null }>(
    `SELECT ${COLUMNS}, CASE WHEN api_key = $1 THEN NULL ELSE previous_api_key_until_ms END AS key_until_ms
     FROM paymasters
     WHERE account_id = $2 AND id = (SELECT id FROM paymasters WHERE api_key = $1
       UNION ALL SELECT id FROM paymasters WHERE previous_api_key = $1 AND previous_api_key_until_ms > $3 LIMIT 1)`,
    [apiKey, accountId, nowMs],
  );
  const row = rows[0];
  return row && { ...toPaymaster(row), apiKeyUntilMs: row.key_until_ms === null ? null : Number(row.key_until_ms) };
}

/**
 * Gives the paymaster a new apiKey. With a grace period the replaced key keeps working until `untilMs`; without one
 * (`untilMs` null) it stops at once. A key still in its grace from an earlier rotation stops at once either way.
 */
export async function rotatePaymasterApiKey(
  db: Queryable,
  paymasterId: string,
  untilMs: number | null,
): Promise<Paymaster | undefined> {
  const apiKey = randomBytes(24).toString("base64url");
  // The right-hand sides read the row as it was: previous_api_key gets the key being replaced.
  const rows = await db.query<PaymasterRow>(
    `UPDATE paymasters
     SET previous_api_key = CASE WHEN $3::bigint IS NULL THEN NULL ELSE api_key END,
         previous_api_key_until_ms = $3::bigint,
         api_key = $2
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [paymasterId, apiKey, untilMs],
  );
  return rows[0] && toPaymaster(rows[0]);
}

/** Only the latest message is accepted, so each new one replaces the one before. */
export async function saveFundingMessage(db: Queryable, paymasterId: string, message: string): Promise<void> {
  await db.query("UPDATE paymasters SET funding_message = $2 WHERE id = $1", [paymasterId, message]);
}

export async function findFundingMessage(db: Queryable, paymasterId: string): Promise<string | null> {
  const rows = await db.query<{ funding_message: string | null }>(
    "SELECT funding_message FROM paymasters WHERE id = $1",
    [paymasterId],
  );
  return rows[0]?.funding_message ?? null;
}

/**
 * Links the funding wallet only if `signedMessage` is still the latest message, and consumes the message, so a
 * signature cannot be replayed and a message fetched meanwhile wins. Returns undefined when the message changed.
 */
export async function linkFundingWallet(
  db: Queryable,
  paymasterId: string,
  address: string,
  signedMessage: string,
): Promise<Paymaster | undefined> {
  const rows = await db.query<PaymasterRow>(
    `UPDATE paymasters SET funding_address = $2, funding_message = NULL
     WHERE id = $1 AND funding_message = $3 RETURNING ${COLUMNS}`,
    [paymasterId, address, signedMessage],
  );
  return rows[0] && toPaymaster(rows[0]);
}

/** Pauses (false) or resumes (true) a whole paymaster; undefined when it does not exist. */
export async function setPaymasterActive(
  db: Queryable,
  paymasterId: string,
  active: boolean,
): Promise<Paymaster | undefined> {
  const rows = await db.query<PaymasterRow>(`UPDATE paymasters SET active = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [
    paymasterId,
    active,
  ]);
  return rows[0] && toPaymaster(rows[0]);
}

/** Sets (or with null, removes) the sponsor wallets are shown; undefined for an unknown paymaster. */
export async function setSponsorInfo(
  db: Queryable,
  paymasterId: string,
  sponsor: SponsorInfo | null,
): Promise<Paymaster | undefined> {
  const rows = await db.query<PaymasterRow>(
    `UPDATE paymasters SET sponsor_name = $2, sponsor_icon = $3 WHERE id = $1 RETURNING ${COLUMNS}`,
    [paymasterId, sponsor?.name ?? null, sponsor?.icon ?? null],
  );
  return rows[0] && toPaymaster(rows[0]);
}

/**
 * Replaces the origins a paymaster answers browsers from, and whether an Origin is required (undefined: as it is);
 * undefined if the paymaster is gone.
 */
export async function setAllowedOrigins(
  db: Queryable,
  paymasterId: string,
  origins: string[],
  requireOrigin: boolean | undefined,
): Promise<Paymaster | undefined> {
  const rows = await db.query<PaymasterRow>(
    `UPDATE paymasters SET allowed_origins = $2, require_origin = COALESCE($3, require_origin)
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [paymasterId, JSON.stringify(origins), requireOrigin ?? null],
  );
  return rows[0] && toPaymaster(rows[0]);
}

/** Sets (or with null, removes) how many blocks an EntryPoint v0.9 signature stays valid; undefined if gone. */
export async function setValidityBlocks(
  db: Queryable,
  paymasterId: string,
  blocks: number | null,
): Promise<Paymaster | undefined> {
  const rows = await db.query<PaymasterRow>(
    `UPDATE paymasters SET validity_blocks = $2 WHERE id = $1 RETURNING ${COLUMNS}`,
    [paymasterId, blocks],
  );
  return rows[0] && toPaymaster(rows[0]);
}
