import type { Rule, RuleInput, RuleOutcome } from "./rule";
import { contractWhitelist } from "./rules/contractWhitelist";
import { fundingAndRules } from "./rules/fundingAndRules";
import { walletDeployment } from "./rules/walletDeployment";

export type Decision =
  | { sponsored: true; outcomes: RuleOutcome[] }
  | { sponsored: false; reason: string; outcomes: RuleOutcome[] };

/**
 * The rules that read only memory, in the order of decisions §3. Rules that cost a database write (spending limits)
 * or a call out (webhooks) come after them, so a cheap refusal stops the evaluation first.
 */
export const CHEAP_RULES: readonly Rule[] = [fundingAndRules, walletDeployment, contractWhitelist];

/** Runs the rules in order; on a refusal, what earlier rules reserved is released, latest first. */
export async function decide(input: RuleInput, rules: readonly Rule[]): Promise<Decision> {
  const outcomes: RuleOutcome[] = [];
  const passed: Rule[] = [];
  for (const rule of rules) {
    let outcome: RuleOutcome;
    try {
      outcome = await rule.evaluate(input);
    } catch (error) {
      await releaseAll(passed, input);
      throw error;
    }
    outcomes.push(outcome);
    if (!outcome.passed) {
      await releaseAll(passed, input);
      return { sponsored: false, reason: outcome.reason ?? rule.name, outcomes };
    }
    passed.push(rule);
  }
  return { sponsored: true, outcomes };
}

async function releaseAll(passed: Rule[], input: RuleInput): Promise<void> {
  for (const rule of passed.reverse()) await rule.release?.(input);
}
