import type { Address } from "viem";
import type { Queryable } from "../storage/database";
import { isReadable, type UnreadablePolicy } from "../storage/policies";
import { readStoredSetup } from "../storage/sponsorshipSetup";
import { type ParsedAbis, sharedParsedAbis } from "./parsedAbis";
import { prepareSenderLists } from "./rules/senderLists";
import type { SponsorshipSetup } from "./setup";

/**
 * Loads what the sponsorship rules read about the paymaster an apiKey names, with each whitelisted contract's sponsored
 * methods turned into their selectors (each ABI parsed once per process, see ParsedAbis); undefined for an unknown
 * apiKey. Sender lists are read into sets here too (rules/senderLists.ts).
 */
export async function loadSponsorshipSetup(
  db: Queryable,
  apiKey: string,
  abis: ParsedAbis = sharedParsedAbis,
): Promise<SponsorshipSetup | undefined> {
  const stored = await readStoredSetup(db, apiKey);
  if (!stored) return undefined;
  const contracts = new Map<string, ReadonlySet<string>>();
  for (const contract of stored.contracts) {
    // Overloads share a name: whitelisting the name whitelists every overload's selector.
    const whitelisted = new Set(contract.whitelistedMethods);
    const functions = abis.of(contract.id, contract.abi).functions.filter((f) => whitelisted.has(f.name));
    contracts.set(contract.address, new Set(functions.map((f) => f.selector)));
  }
  const policies = stored.policies.filter(isReadable);
  const unreadablePolicies = stored.policies.filter((policy): policy is UnreadablePolicy => !isReadable(policy));
  // Each sender list becomes a set here, once per load, not on a request.
  prepareSenderLists(policies);
  const { paymaster } = stored;
  return {
    version: stored.version,
    paymasterId: paymaster.id,
    accountId: paymaster.accountId,
    apiKeyUntilMs: stored.apiKeyUntilMs,
    name: paymaster.name,
    chainId: paymaster.chainId,
    paused: !paymaster.active,
    fundingAddress: paymaster.fundingAddress as Address | null,
    policies,
    unreadablePolicies,
    contracts,
    webhooks: stored.webhooks,
    ...(paymaster.sponsor ? { sponsor: paymaster.sponsor } : {}),
    origins: { allowed: new Set(paymaster.allowedOrigins), required: paymaster.requireOrigin },
    ...(paymaster.validityBlocks === null ? {} : { validityBlocks: paymaster.validityBlocks }),
  };
}
