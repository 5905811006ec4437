import type { NativeUsdPrice } from "../../chain/nativeUsdPrice";
import type { LimitLedger, Reservation } from "../../storage/limitLedger";
import { type PolicyOf, policiesOfKind } from "../../storage/policies";
import { pass, type Rule, type RuleInput, refuse } from "../rule";
import { currentCycleStartMs, formatUsage, type SpendingLimit, thresholdUnits, weiToEther } from "../spendingLimit";
import { priceText, usdUnitsToDollars, weiToUsdUnits } from "../usdAmount";

const RULE = "spendingLimits";

/** A limit that refused an operation: the limit alert's trigger. Must not throw nor block. */
export interface LimitRefused {
  input: RuleInput;
  policy: LimitPolicy;
  cycleStartMs: number;
  reason: string;
}

type LimitPolicy = PolicyOf<"PAYMASTER_SA_LIMIT">;

/**
 * What the operation reserves against `policy`: 1 for COUNT, the worst-case cost in wei for NATIVE_ASSET, and for USD
 * that cost in USD units at the request's price, rounded up (so the dollars counted are never fewer than spent).
 */
function reservationFor(policy: LimitPolicy, input: RuleInput, price: NativeUsdPrice | undefined): Reservation {
  const limit = policy.policyData;
  const userOp = input.version.view(input.userOp);
  const worstCase = input.version.worstCaseCostWei(input.userOp);
  return {
    policyId: policy.id,
    cycleStartMs: currentCycleStartMs(policy.cycleStartMs ?? 0, limit.cycleDuration, input.nowMs),
    scopeKey: limit.type === "SMART_ACCOUNT" ? userOp.sender.toLowerCase() : "",
    sender: userOp.sender.toLowerCase(),
    nonce: userOp.nonce,
    amount:
      limit.thresholdType === "COUNT"
        ? 1n
        : limit.thresholdType === "USD"
          ? weiToUsdUnits(worstCase, price as NativeUsdPrice)
          : worstCase,
    threshold: thresholdUnits(limit),
    validUntil: input.validUntil,
  };
}

const UNITS = { COUNT: "user operations", NATIVE_ASSET: "ETH", USD: "USD" } as const;

function reason(policy: LimitPolicy, reservation: Reservation, used: bigint, cost: string): string {
  const limit = policy.policyData;
  const who = limit.type === "SMART_ACCOUNT" ? ` by sender ${reservation.sender}` : "";
  return (
    `Spending limit "${policy.name}" (${limit.type}, ${limit.thresholdType}) reached: ` +
    `${formatUsage(limit, used)} of ${formatUsage(limit, reservation.threshold)} ${UNITS[limit.thresholdType]} ` +
    `used in the current cycle${who}${cost}`
  );
}

/** The refusal's last words: what the operation may cost in the limit's unit (nothing for COUNT). */
function costNote(limit: SpendingLimit, reservation: Reservation, worstCase: bigint, price?: NativeUsdPrice): string {
  if (limit.thresholdType === "NATIVE_ASSET") {
    return `; this operation may cost up to ${formatUsage(limit, reservation.amount)} ETH`;
  }
  if (limit.thresholdType === "USD" && price) {
    return (
      `; this operation may cost up to ${usdUnitsToDollars(reservation.amount)} USD ` +
      `(${weiToEther(worstCase)} ETH at ${priceText(price)} USD)`
    );
  }
  return "";
}

/**
 * Rule 7: every active spending limit must have room in its current cycle for this operation (1 for COUNT, the
 * worst-case cost for NATIVE_ASSET, that cost in dollars for USD). The rule only reads: an operation that cannot fit is
 * refused here, before the deposit check and the webhooks. One that fits carries its reservations to the record, which
 * makes them (all or none) in the same transaction, or records a refusal with the same words if the room went to
 * others meanwhile. So nothing is reserved for an operation a later rule refuses, and a crash never leaves a
 * reservation without its record. A USD limit without a usable native token price refuses (fail-closed).
 */
export function spendingLimitRule(ledger: LimitLedger, onRefused?: (refusal: LimitRefused) => void): Rule {
  return {
    name: RULE,
    async evaluate(input) {
      const limits = policiesOfKind(input.setup.policies, "PAYMASTER_SA_LIMIT");
      if (limits.length === 0) return pass(RULE);
      let price: NativeUsdPrice | undefined;
      const usdLimit = limits.find((policy) => policy.policyData.thresholdType === "USD");
      if (usdLimit) {
        const reading = input.nativeUsdPrice
          ? await input.nativeUsdPrice.read()
          : { ok: false as const, reason: "No native token price is available" };
        if (!reading.ok) {
          return refuse(RULE, `Spending limit "${usdLimit.name}" (USD) cannot be checked: ${reading.reason}`);
        }
        price = reading.price;
      }
      const worstCase = input.version.worstCaseCostWei(input.userOp);
      const reservations = limits.map((policy) => reservationFor(policy, input, price));
      const refusal = (i: number, used: bigint) => {
        const reservation = reservations[i] as Reservation;
        const policy = limits[i] as LimitPolicy;
        const words = reason(policy, reservation, used, costNote(policy.policyData, reservation, worstCase, price));
        // Words every refusal, here or at record time: the one point that tells the limit alert (docs/alerts.md).
        onRefused?.({ input, policy, cycleStartMs: reservation.cycleStartMs, reason: words });
        return words;
      };
      const outcome = await ledger.check(reservations);
      if (!outcome.ok) return refuse(RULE, refusal(outcome.index, outcome.used));
      return { ...pass(RULE), claim: { rule: RULE, reservations, refusal } };
    },
  };
}
