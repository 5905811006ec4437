import type { Rule, RuleInput, RuleOutcome } from "./rule";
import { contractWhitelist } from "./rules/contractWhitelist";
import { fundingAndRules } from "./rules/fundingAndRules";
import { walletDeployment } from "./rules/walletDeployment";

export type Decision =
  | { sponsored: true; outcomes: RuleOutcome[] }
  | { sponsored: false; reason: string; outcomes: RuleOutcome[] };

/**
 * The rules of decisions §3 in order, cheapest first: a refusal by a rule that reads only memory stops the evaluation
 * before anything that costs a database write or a webhook call. Spending limits and webhooks join this list as
 * further rules.
 */
export const SPONSORED_MODE_RULES: readonly Rule[] = [fundingAndRules, walletDeployment, contractWhitelist];

export async function decide(input: RuleInput, rules: readonly Rule[] = SPONSORED_MODE_RULES): Promise<Decision> {
  const outcomes: RuleOutcome[] = [];
  for (const rule of rules) {
    const outcome = await rule.evaluate(input);
    outcomes.push(outcome);
    if (!outcome.passed) return { sponsored: false, reason: outcome.reason ?? rule.name, outcomes };
  }
  return { sponsored: true, outcomes };
}
