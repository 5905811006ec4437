import type { Queryable } from "./database";
import { type Paymaster, type PaymasterRow, sponsorOf } from "./paymasters";
import { listPolicies, type Policy } from "./policies";
import { isStorableText } from "./storableText";
import { listWebhooks, type Webhook } from "./webhooks";

/** What is stored about the paymaster an apiKey names that the sponsorship rules read, as stored. */
export interface StoredSetup {
  /** The paymaster's stored fields but its apiKey and the management API's type and version labels. */
  paymaster: Omit<Paymaster, "type" | "version" | "apiKey">;
  /** Until when the apiKey it was read by names the paymaster (ms): set for a key a rotation replaced; else null. */
  apiKeyUntilMs: number | null;
  /** The paymaster's setup version when it was read (read first: a change during the read makes it stale, never new). */
  version: string;
  /** Active rules only, readable or not (src/storage/policies.ts reads each row's settings by its kind). */
  policies: Policy[];
  /** `id` names the row: its ABI is never changed in place (an update changes the whitelisted methods only). */
  contracts: { id: string; address: string; abi: string; whitelistedMethods: string[] }[];
  /** Active webhooks only. */
  webhooks: Webhook[];
}

type SetupPaymasterRow = Omit<PaymasterRow, "type" | "version" | "api_key"> & {
  setup_version: string | number;
  key_until_ms: string | number | null;
};

/**
 * The paymaster an apiKey names: its current key, or the key a rotation replaced (while that key's grace lasts; the
 * time is compared by the caller, with its clock, through `key_until_ms`). Two probes of the two unique indexes rather
 * than an OR, so that the plan stays an index lookup whatever the table's statistics say (PGlite has no autovacuum).
 */
const BY_API_KEY = `id = (SELECT id FROM paymasters WHERE api_key = $1
  UNION ALL SELECT id FROM paymasters WHERE previous_api_key = $1 AND previous_api_key_until_ms IS NOT NULL LIMIT 1)`;

/** Reads a paymaster's sponsorship setup by its apiKey; undefined for an unknown apiKey. */
export async function readStoredSetup(db: Queryable, apiKey: string): Promise<StoredSetup | undefined> {
  if (!isStorableText(apiKey)) return undefined;
  const [paymaster] = await db.query<SetupPaymasterRow>(
    `SELECT id, account_id, name, chain_id, funding_address, setup_version, active, sponsor_name, sponsor_icon,
       allowed_origins, require_origin, validity_blocks,
       CASE WHEN api_key = $1 THEN NULL ELSE previous_api_key_until_ms END AS key_until_ms
     FROM paymasters WHERE ${BY_API_KEY}`,
    [apiKey],
  );
  if (!paymaster) return undefined;
  const [policies, contractRows, webhooks] = await Promise.all([
    listPolicies(db, paymaster.id),
    db.query<{ id: string; address: string; abi: string; whitelisted_methods: string[] }>(
      "SELECT id, address, abi, whitelisted_methods FROM smart_contracts WHERE paymaster_id = $1",
      [paymaster.id],
    ),
    listWebhooks(db, paymaster.id),
  ]);
  return {
    paymaster: {
      id: paymaster.id,
      accountId: paymaster.account_id,
      name: paymaster.name,
      chainId: Number(paymaster.chain_id),
      fundingAddress: paymaster.funding_address,
      active: paymaster.active,
      sponsor: sponsorOf(paymaster),
      allowedOrigins: paymaster.allowed_origins,
      requireOrigin: paymaster.require_origin,
      validityBlocks: paymaster.validity_blocks === null ? null : Number(paymaster.validity_blocks),
    },
    apiKeyUntilMs: paymaster.key_until_ms === null ? null : Number(paymaster.key_until_ms),
    version: String(paymaster.setup_version),
    policies: policies.filter((policy) => policy.active),
    contracts: contractRows.map((row) => ({
      id: row.id,
      address: row.address,
      abi: row.abi,
      whitelistedMethods: row.whitelisted_methods,
    })),
    webhooks: webhooks.filter((webhook) => webhook.active),
  };
}

/**
 * The setup version of the paymaster an apiKey names, bumped by every change of its setup (migration 7); undefined for
 * an unknown apiKey. One indexed row: what a cached setup costs to check.
 */
export async function readSetupVersion(db: Queryable, apiKey: string): Promise<string | undefined> {
  if (!isStorableText(apiKey)) return undefined;
  const [row] = await db.query<{ setup_version: string | number }>(
    `SELECT setup_version FROM paymasters WHERE ${BY_API_KEY}`,
    [apiKey],
  );
  return row ? String(row.setup_version) : undefined;
}
