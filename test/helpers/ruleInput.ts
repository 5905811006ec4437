// The input of one rule evaluated alone, without a database or a chain. Each rule's unit tests vary only the operation,
// the paymaster's rules and at times the clock or the price; the rest of the setup (a paymaster of the local chain with
// no contracts or webhooks) is the same for all of them, so it is written once here.
import type { Address } from "viem";
import type { SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import type { RuleInput } from "../../src/sponsorship/rule";
import type { ReadablePolicy } from "../../src/storage/policies";
import { versionOf } from "./versionOf";

/** A funding wallet that is no test's sender, so a rule cannot pass by confusing the two. */
const FUNDING: Address = "0x00000000000000000000000000000000000f0f0f";

/** What a test may set besides the operation and the rules; the clock defaults to 0 and the signature to 300 s. */
type RuleInputOptions = Partial<Pick<RuleInput, "nowMs" | "validUntil" | "nativeUsdPrice">>;

export function ruleInput(
  userOp: SponsoredUserOperation,
  policies: ReadablePolicy[],
  options: RuleInputOptions = {},
): RuleInput {
  return {
    setup: {
      paymasterId: "pm",
      accountId: "account",
      chainId: 31337,
      fundingAddress: FUNDING,
      policies,
      contracts: new Map(),
      webhooks: [],
    },
    userOp,
    version: versionOf(userOp),
    nowMs: 0,
    validUntil: 300,
    ...options,
  };
}
