import type { Rule, RuleInput, RuleOutcome, RuleResult } from "./rule";
import { contractWhitelist } from "./rules/contractWhitelist";
import { fundingAndRules } from "./rules/fundingAndRules";
import { walletDeployment } from "./rules/walletDeployment";

export type Decision =
  | { sponsored: true; outcomes: RuleOutcome[]; afterRecord: (recorded: boolean) => void }
  | { sponsored: false; reason: string; outcomes: RuleOutcome[] };

/**
 * The rules that read only memory, in the order of docs/sponsorship-rpc.md, 'Sponsorship rules'. Rules that cost a
 * database write (spending limits) or a call out (webhooks) come after them, so a cheap refusal stops the evaluation
 * first.
 */
export const CHEAP_RULES: readonly Rule[] = [fundingAndRules, walletDeployment, contractWhitelist];

/** Runs the rules in order; on a refusal or a failure, what earlier rules reserved is released, latest first. */
export async function decide(input: RuleInput, rules: readonly Rule[]): Promise<Decision> {
  const outcomes: RuleOutcome[] = [];
  const reserved: RuleResult[] = [];
  const afterRecord: ((recorded: boolean) => void)[] = [];
  try {
    for (const rule of rules) {
      const { release, afterRecord: after, ...outcome } = await rule.evaluate(input);
      outcomes.push(outcome);
      if (!outcome.passed) {
        await releaseAll(reserved);
        return { sponsored: false, reason: outcome.reason ?? rule.name, outcomes };
      }
      if (release) reserved.push({ ...outcome, release });
      if (after) afterRecord.push(after);
    }
  } catch (error) {
    await releaseAll(reserved);
    throw error;
  }
  return {
    sponsored: true,
    outcomes,
    afterRecord: (recorded) => {
      for (const after of afterRecord) after(recorded);
    },
  };
}

async function releaseAll(reserved: RuleResult[]): Promise<void> {
  for (const result of reserved.reverse()) await result.release?.();
}
