import type { LimitLedger, Reservation } from "../../storage/limitLedger";
import type { Policy } from "../../storage/policies";
import { viewOf, worstCaseCost } from "../operationView";
import { pass, type Rule, type RuleInput, refuse } from "../rule";
import { currentCycleStartMs, formatUsage, type SpendingLimit, thresholdUnits } from "../spendingLimit";

const RULE = "spendingLimits";

function reservationFor(policy: Policy, input: RuleInput): Reservation {
  const limit = policy.policyData as unknown as SpendingLimit;
  const userOp = viewOf(input.userOp);
  return {
    policyId: policy.id,
    cycleStartMs: currentCycleStartMs(policy.cycleStartMs ?? 0, limit.cycleDuration, input.nowMs),
    scopeKey: limit.type === "SMART_ACCOUNT" ? userOp.sender.toLowerCase() : "",
    sender: userOp.sender.toLowerCase(),
    nonce: userOp.nonce,
    amount: limit.thresholdType === "COUNT" ? 1n : worstCaseCost(input.userOp),
    threshold: thresholdUnits(limit),
    validUntil: input.validUntil,
  };
}

function reason(policy: Policy, reservation: Reservation, used: bigint): string {
  const limit = policy.policyData as unknown as SpendingLimit;
  const unit = limit.thresholdType === "COUNT" ? "user operations" : "ETH";
  const who = limit.type === "SMART_ACCOUNT" ? ` by sender ${reservation.sender}` : "";
  const cost =
    limit.thresholdType === "NATIVE_ASSET"
      ? `; this operation may cost up to ${formatUsage(limit, reservation.amount)} ETH`
      : "";
  return (
    `Spending limit "${policy.name}" (${limit.type}, ${limit.thresholdType}) reached: ` +
    `${formatUsage(limit, used)} of ${formatUsage(limit, reservation.threshold)} ${unit} used in the current cycle${who}${cost}`
  );
}

/**
 * Rule 6: every active spending limit must have room in its current cycle for this operation (1 for COUNT, the
 * worst-case cost for NATIVE_ASSET). The rule only reads: an operation that cannot fit is refused here, before the
 * deposit check and the webhooks. One that fits carries its reservations to the record, which makes them (all or none)
 * in the same transaction, or records a refusal with the same words if the room went to others meanwhile. So nothing
 * is reserved for an operation a later rule refuses, and a crash never leaves a reservation without its record.
 */
export function spendingLimitRule(ledger: LimitLedger): Rule {
  return {
    name: RULE,
    async evaluate(input) {
      const limits = input.setup.policies.filter((policy) => policy.policyType === "PAYMASTER_SA_LIMIT");
      if (limits.length === 0) return pass(RULE);
      const reservations = limits.map((policy) => reservationFor(policy, input));
      const refusal = (i: number, used: bigint) => reason(limits[i] as Policy, reservations[i] as Reservation, used);
      const outcome = await ledger.check(reservations);
      if (!outcome.ok) return refuse(RULE, refusal(outcome.index, outcome.used));
      return { ...pass(RULE), claim: { rule: RULE, reservations, refusal } };
    },
  };
}
