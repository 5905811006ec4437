import {
  currentCycleStartMs,
  cycleLengthMs,
  formatUsage,
  type SpendingLimit,
  thresholdUnits,
} from "../sponsorship/spendingLimit";
import { usageOf } from "../storage/limitLedger";
import type { Paymaster } from "../storage/paymasters";
import { listPolicies } from "../storage/policies";
import type { ActionContext } from "./managementContext";

/**
 * How much of each spending limit the current cycle has used, overall for PAYMASTER limits and per sender for
 * SMART_ACCOUNT limits, in the threshold's unit (operations, or ether).
 */
export async function limitUsage(ctx: ActionContext, paymaster: Paymaster) {
  const nowMs = ctx.now();
  const limits = (await listPolicies(ctx.db, paymaster.id))
    .filter((policy) => policy.policyType === "PAYMASTER_SA_LIMIT")
    .map((policy) => {
      const limit = policy.policyData as unknown as SpendingLimit;
      const cycleStartMs = currentCycleStartMs(policy.cycleStartMs ?? 0, limit.cycleDuration, nowMs);
      return { policy, limit, cycleStartMs };
    });
  const usage = await usageOf(
    ctx.db,
    limits.map(({ policy, cycleStartMs }) => ({ policyId: policy.id, cycleStartMs })),
  );
  return limits.map(({ policy, limit, cycleStartMs }) => {
    const threshold = thresholdUnits(limit);
    const rows = usage.filter((row) => row.policyId === policy.id);
    const view = (used: bigint) => ({
      used: formatUsage(limit, used),
      remaining: formatUsage(limit, used >= threshold ? 0n : threshold - used),
    });
    return {
      policyId: policy.id,
      name: policy.name,
      active: policy.active,
      type: limit.type,
      thresholdType: limit.thresholdType,
      threshold: limit.threshold,
      startTimeInEpoch: cycleStartMs,
      durationInMs: cycleLengthMs(policy.cycleStartMs ?? 0, limit.cycleDuration, nowMs),
      ...(limit.type === "PAYMASTER"
        ? view(rows[0]?.used ?? 0n)
        : { senders: rows.map((row) => ({ sender: row.scopeKey, ...view(row.used) })) }),
    };
  });
}
