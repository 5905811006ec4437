import type { Address } from "viem";
import type { Queryable } from "../storage/database";
import { readStoredSetup } from "../storage/sponsorshipSetup";
import { parseContractAbi } from "./contractAbi";
import type { SponsorshipSetup } from "./setup";

/**
 * Loads what the sponsorship rules read about the paymaster an apiKey names, with each whitelisted contract's sponsored
 * methods turned into their selectors; undefined for an unknown apiKey.
 */
export async function loadSponsorshipSetup(db: Queryable, apiKey: string): Promise<SponsorshipSetup | undefined> {
  const stored = await readStoredSetup(db, apiKey);
  if (!stored) return undefined;
  const contracts = new Map<string, ReadonlySet<string>>();
  for (const contract of stored.contracts) {
    // Overloads share a name: whitelisting the name whitelists every overload's selector.
    const whitelisted = new Set(contract.whitelistedMethods);
    const functions = parseContractAbi(contract.abi).functions.filter((f) => whitelisted.has(f.name));
    contracts.set(contract.address, new Set(functions.map((f) => f.selector)));
  }
  const { paymaster } = stored;
  return {
    paymasterId: paymaster.id,
    accountId: paymaster.accountId,
    name: paymaster.name,
    chainId: paymaster.chainId,
    paused: !paymaster.active,
    fundingAddress: paymaster.fundingAddress as Address | null,
    policies: stored.policies,
    contracts,
    webhooks: stored.webhooks,
  };
}
