import { type PolicyOf, policiesOfKind } from "../../storage/policies";
import { pass, type Rule, refuse } from "../rule";

const RULE = "timeWindow";

const at = (ms: number) => new Date(ms).toISOString();

/** Why the window does not hold now, or undefined when it does. */
function outside(policy: PolicyOf<"TIME_WINDOW">, nowMs: number): string | undefined {
  const { startTimeInEpoch: start, endTimeInEpoch: end } = policy.policyData;
  if (start !== undefined && nowMs < start) {
    return `Sponsorship window "${policy.name}" opens at ${at(start)} (${start}); it is now ${at(nowMs)}`;
  }
  if (end !== undefined && nowMs >= end) {
    return `Sponsorship window "${policy.name}" closed at ${at(end)} (${end}); it is now ${at(nowMs)}`;
  }
  return undefined;
}

/**
 * Rule 5: every active TIME_WINDOW rule must hold at the decision's clock (`nowMs`, the service's injected clock), from
 * its start (included) to its end (excluded). It reads no field of the operation, so it holds for every EntryPoint
 * version alike.
 */
export const timeWindow: Rule = {
  name: RULE,
  evaluate({ setup, nowMs }) {
    for (const policy of policiesOfKind(setup.policies, "TIME_WINDOW")) {
      const reason = outside(policy, nowMs);
      if (reason !== undefined) return refuse(RULE, reason);
    }
    return pass(RULE);
  },
};
