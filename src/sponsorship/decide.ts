import type { LimitClaim } from "../storage/sponsorships";
import type { Rule, RuleInput, RuleOutcome, RuleResult } from "./rule";
import { contractWhitelist } from "./rules/contractWhitelist";
import { fundingAndRules } from "./rules/fundingAndRules";
import { maxCostPerOp } from "./rules/maxCostPerOp";
import { senderLists } from "./rules/senderLists";
import { timeWindow } from "./rules/timeWindow";
import { walletDeployment } from "./rules/walletDeployment";

export type Decision =
  | {
      sponsored: true;
      outcomes: RuleOutcome[];
      afterRecord: (recorded: boolean) => void;
      /** The reservations to make with the record (one rule makes them: the spending limits). */
      claim?: LimitClaim;
    }
  | { sponsored: false; reason: string; outcomes: RuleOutcome[] };

/**
 * The rules that read only memory, in the order of docs/sponsorship-rpc.md, 'Sponsorship rules' (a USD cost cap also
 * reads the native token price, which a feed refreshes at most every few seconds: src/chain/nativeUsdPrice.ts). Rules
 * that cost a database write (spending limits) or a call out (webhooks) come after them, so a cheap refusal stops the
 * evaluation first. pm_getPaymasterStubData runs them too, before the user signs (src/sponsorship/eligibility.ts),
 * over the operation at its cheapest: a rule here must hold nothing, and a refusal of it must hold for every
 * completion of the operation's gas.
 */
export const CHEAP_RULES: readonly Rule[] = [
  fundingAndRules,
  walletDeployment,
  contractWhitelist,
  maxCostPerOp,
  timeWindow,
  senderLists,
];

/**
 * Runs the rules in order; on a refusal or a failure, what earlier rules hold is released, latest first. A rule's
 * `claim` is not made here: the sponsorship's record makes it.
 */
export async function decide(input: RuleInput, rules: readonly Rule[]): Promise<Decision> {
  const outcomes: RuleOutcome[] = [];
  const reserved: RuleResult[] = [];
  const afterRecord: ((recorded: boolean) => void)[] = [];
  let claim: LimitClaim | undefined;
  // Released once at most: a refusal releases, and if that release fails the catch below must not release again.
  let released = false;
  const releaseHeld = async () => {
    if (released) return;
    released = true;
    await releaseAll(reserved);
  };
  try {
    for (const rule of rules) {
      const { release, afterRecord: after, claim: ruleClaim, ...outcome } = await rule.evaluate(input);
      outcomes.push(outcome);
      if (!outcome.passed) {
        await releaseHeld();
        return { sponsored: false, reason: outcome.reason ?? rule.name, outcomes };
      }
      if (release) reserved.push({ ...outcome, release });
      if (after) afterRecord.push(after);
      if (ruleClaim) {
        if (claim) throw new Error(`rules ${claim.rule} and ${rule.name} both claim reservations`);
        claim = ruleClaim;
      }
    }
  } catch (error) {
    await releaseHeld();
    throw error;
  }
  return {
    sponsored: true,
    outcomes,
    ...(claim ? { claim } : {}),
    afterRecord: (recorded) => {
      for (const after of afterRecord) after(recorded);
    },
  };
}

/** Releases latest first; a release that fails does not keep the others from running, and its error is thrown after. */
async function releaseAll(reserved: readonly RuleResult[]): Promise<void> {
  const failures: unknown[] = [];
  for (const result of [...reserved].reverse()) {
    try {
      await result.release?.();
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
}
