import type { Queryable } from "./database";
import { type SponsorInfo, sponsorOf } from "./paymasters";
import { listPolicies, type Policy } from "./policies";
import { isStorableText } from "./storableText";
import { listWebhooks, type Webhook } from "./webhooks";

/** What is stored about the paymaster an apiKey names that the sponsorship rules read, as stored. */
export interface StoredSetup {
  paymaster: {
    id: string;
    accountId: string;
    name: string;
    chainId: number;
    fundingAddress: string | null;
    active: boolean;
    sponsor: SponsorInfo | null;
  };
  /** The paymaster's setup version when it was read (read first: a change during the read makes it stale, never new). */
  version: string;
  /** Active rules only, readable or not (src/storage/policies.ts reads each row's settings by its kind). */
  policies: Policy[];
  /** `id` names the row: its ABI is never changed in place (an update changes the whitelisted methods only). */
  contracts: { id: string; address: string; abi: string; whitelistedMethods: string[] }[];
  /** Active webhooks only. */
  webhooks: Webhook[];
}

interface PaymasterRow {
  id: string;
  account_id: string;
  name: string;
  chain_id: string | number;
  funding_address: string | null;
  setup_version: string | number;
  active: boolean;
  sponsor_name: string | null;
  sponsor_icon: string | null;
}

/** Reads a paymaster's sponsorship setup by its apiKey; undefined for an unknown apiKey. */
export async function readStoredSetup(db: Queryable, apiKey: string): Promise<StoredSetup | undefined> {
  if (!isStorableText(apiKey)) return undefined;
  const [paymaster] = await db.query<PaymasterRow>(
    `SELECT id, account_id, name, chain_id, funding_address, setup_version, active, sponsor_name, sponsor_icon
     FROM paymasters WHERE api_key = $1`,
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
    },
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
    "SELECT setup_version FROM paymasters WHERE api_key = $1",
    [apiKey],
  );
  return row ? String(row.setup_version) : undefined;
}
