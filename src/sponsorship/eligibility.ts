// Eligibility without reserving: what pm_getPaymasterStubData asks before the wallet's user signs. The rules that
// spend nothing (memory-only rules, the deposit read without a hold) run on the operation as it can end up at its
// cheapest, so that a refusal here is one the final request would give as well.
import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "./partialUserOperation";
import type { SponsoredUserOperation } from "./partialUserOperationV07";
import type { Rule, RuleInput, RuleOutcome } from "./rule";

export type Eligibility =
  | { eligible: true; outcomes: RuleOutcome[] }
  | { eligible: false; reason: string; refusedBy: string; outcomes: RuleOutcome[] };

/** Gas limits and fees a stub request may leave out; the bundler estimates them after the stub. */
const OPTIONAL_GAS = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS] as const;
type OptionalGas = (typeof OPTIONAL_GAS)[number];

/**
 * The operation at the least it can cost: every gas limit or fee it does not carry yet counts as zero. A worst-case
 * cost only grows with each of these fields, so a cost rule that refuses this operation refuses every completion of it
 * the bundler could estimate; one that passes it decides nothing (the final request decides over the real figures).
 * ERC20 mode weighs the sender's token balance against the same completion.
 */
export function cheapestCompletion<Op extends SponsoredUserOperation>(op: Op): Op & Record<OptionalGas, bigint> {
  const filled = { ...op } as Op & Record<OptionalGas, bigint | undefined>;
  for (const field of OPTIONAL_GAS) filled[field] ??= 0n;
  return filled as Op & Record<OptionalGas, bigint>;
}

/**
 * Runs `rules` in order and stops at the first refusal. These rules must hold nothing: a rule that answers a release,
 * an afterRecord or a claim is a programming error here (it would reserve for a request that signs nothing), and is
 * thrown rather than leaked.
 */
export async function checkEligibility(input: RuleInput, rules: readonly Rule[]): Promise<Eligibility> {
  const outcomes: RuleOutcome[] = [];
  for (const rule of rules) {
    const { release, afterRecord, claim, ...outcome } = await rule.evaluate(input);
    if (release || afterRecord || claim) {
      await release?.();
      afterRecord?.(false);
      throw new Error(`rule ${rule.name} holds something: it cannot run at the stub`);
    }
    outcomes.push(outcome);
    if (!outcome.passed) {
      return { eligible: false, reason: outcome.reason ?? rule.name, refusedBy: rule.name, outcomes };
    }
  }
  return { eligible: true, outcomes };
}
