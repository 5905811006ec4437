import type { Database, Queryable } from "../../storage/database";
import { type Reservation, reserve, unreserve } from "../../storage/limitLedger";
import type { Policy } from "../../storage/policies";
import { pass, type Rule, type RuleInput, refuse } from "../rule";
import {
  currentCycleStartMs,
  formatUsage,
  type SpendingLimit,
  thresholdUnits,
  worstCaseCostWei,
} from "../spendingLimit";
import type { SignableUserOperation } from "../sponsor";

const RULE = "spendingLimits";

/** Raised inside the reservation transaction to roll back the limits already reserved. */
class LimitReached extends Error {
  constructor(
    readonly policy: Policy,
    readonly reservation: Reservation,
    readonly used: bigint,
  ) {
    super("limit reached");
  }
}

function reservationFor(policy: Policy, input: RuleInput): Reservation {
  const limit = policy.policyData as unknown as SpendingLimit;
  const userOp = input.userOp as SignableUserOperation;
  return {
    policyId: policy.id,
    cycleStartMs: currentCycleStartMs(policy.cycleStartMs ?? 0, limit.cycleDuration, input.nowMs),
    scopeKey: limit.type === "SMART_ACCOUNT" ? userOp.sender.toLowerCase() : "",
    sender: userOp.sender.toLowerCase(),
    nonce: userOp.nonce,
    amount: limit.thresholdType === "COUNT" ? 1n : worstCaseCostWei(userOp),
    threshold: thresholdUnits(limit),
    validUntil: input.validUntil,
  };
}

function reason({ policy, reservation, used }: LimitReached): string {
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

async function reserveAll(db: Queryable, reservations: [Policy, Reservation][]) {
  const held: { reservation: Reservation; previous: bigint | null }[] = [];
  for (const [policy, reservation] of reservations) {
    const result = await reserve(db, reservation);
    if (!result.reserved) throw new LimitReached(policy, reservation, result.used);
    held.push({ reservation, previous: result.previous });
  }
  return held;
}

/**
 * Rule 4: every active spending limit must have room in its current cycle for this operation (1 for COUNT, the
 * worst-case cost for NATIVE_ASSET). All limits are reserved together or none: several limits go in one transaction,
 * in a fixed order so that concurrent transactions cannot deadlock.
 */
export function spendingLimitRule(db: Database): Rule {
  return {
    name: RULE,
    async evaluate(input) {
      const limits = input.setup.policies
        .filter((policy) => policy.policyType === "PAYMASTER_SA_LIMIT")
        .sort((a, b) => (a.id < b.id ? -1 : 1));
      if (limits.length === 0) return pass(RULE);
      const reservations = limits.map((policy): [Policy, Reservation] => [policy, reservationFor(policy, input)]);
      let held: Awaited<ReturnType<typeof reserveAll>>;
      try {
        held =
          reservations.length === 1
            ? await reserveAll(db, reservations)
            : await db.transaction((tx) => reserveAll(tx, reservations));
      } catch (error) {
        if (error instanceof LimitReached) return refuse(RULE, reason(error));
        throw error;
      }
      return {
        ...pass(RULE),
        release: () =>
          db.transaction(async (tx) => {
            for (const { reservation, previous } of held.reverse()) await unreserve(tx, reservation, previous);
          }),
      };
    },
  };
}
