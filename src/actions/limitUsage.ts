import { currentCycleStartMs, cycleLengthMs, formatUsage, thresholdUnits } from "../sponsorship/spendingLimit";
import { usageOf } from "../storage/limitLedger";
import type { Paymaster } from "../storage/paymasters";
import { isReadable, listPolicies, policiesOfKind } from "../storage/policies";
import type { ManagementContext } from "./managementContext";

/**
 * How much of each spending limit the current cycle has used, overall for PAYMASTER limits and per sender for
 * SMART_ACCOUNT limits, in the threshold's unit (operations, or ether). A limit whose stored settings cannot be read
 * has no cycle to show and is left out (the rule list shows it as stored; sponsorship refuses while it is active).
 */
export async function limitUsage(ctx: ManagementContext, paymaster: Paymaster) {
  const nowMs = ctx.now();
  const readable = (await listPolicies(ctx.db, paymaster.id)).filter(isReadable);
  const limits = policiesOfKind(readable, "PAYMASTER_SA_LIMIT").map((policy) => {
    const limit = policy.policyData;
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
