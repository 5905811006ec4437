import type { Address } from "viem";
import { parseContractAbi } from "../sponsorship/contractAbi";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { Queryable } from "./database";
import { listPolicies } from "./policies";
import { isStorableText } from "./storableText";
import { listWebhooks } from "./webhooks";

interface PaymasterRow {
  id: string;
  account_id: string;
  name: string;
  chain_id: string | number;
  funding_address: string | null;
}

/** Loads what the sponsorship rules read about the paymaster an apiKey names; undefined for an unknown apiKey. */
export async function loadSponsorshipSetup(db: Queryable, apiKey: string): Promise<SponsorshipSetup | undefined> {
  if (!isStorableText(apiKey)) return undefined;
  const [paymaster] = await db.query<PaymasterRow>(
    "SELECT id, account_id, name, chain_id, funding_address FROM paymasters WHERE api_key = $1",
    [apiKey],
  );
  if (!paymaster) return undefined;
  const [policies, contractRows, webhooks] = await Promise.all([
    listPolicies(db, paymaster.id),
    db.query<{ address: string; abi: string; whitelisted_methods: string[] }>(
      "SELECT address, abi, whitelisted_methods FROM smart_contracts WHERE paymaster_id = $1",
      [paymaster.id],
    ),
    listWebhooks(db, paymaster.id),
  ]);
  const contracts = new Map<string, ReadonlySet<string>>();
  for (const row of contractRows) {
    // Overloads share a name: whitelisting the name whitelists every overload's selector.
    const whitelisted = new Set(row.whitelisted_methods);
    const functions = parseContractAbi(row.abi).functions.filter((f) => whitelisted.has(f.name));
    contracts.set(row.address, new Set(functions.map((f) => f.selector)));
  }
  return {
    paymasterId: paymaster.id,
    accountId: paymaster.account_id,
    name: paymaster.name,
    chainId: Number(paymaster.chain_id),
    fundingAddress: paymaster.funding_address as Address | null,
    policies: policies.filter((policy) => policy.active),
    contracts,
    webhooks: webhooks.filter((webhook) => webhook.active),
  };
}
