import type { LimitClaim } from "../storage/sponsorships";
import type { Rule, RuleInput, RuleOutcome, RuleResult } from "./rule";

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
