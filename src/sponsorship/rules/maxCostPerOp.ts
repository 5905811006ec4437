import { type PolicyOf, policiesOfKind } from "../../storage/policies";
import { pass, type Rule, type RuleInput, refuse } from "../rule";
import { etherToWei, weiToEther } from "../spendingLimit";
import { dollarsToUsdUnits, priceText, usdUnitsToDollars, weiToUsdUnits } from "../usdAmount";

const RULE = "maxCostPerOp";

type CostCap = PolicyOf<"MAX_COST_PER_OP">;

/** The cap in its own unit: wei for NATIVE_ASSET, USD units for USD. */
function capOf(policy: CostCap): { units: bigint; usd: boolean } {
  const { threshold, thresholdType } = policy.policyData;
  return thresholdType === "USD"
    ? { units: dollarsToUsdUnits(threshold), usd: true }
    : { units: etherToWei(threshold), usd: false };
}

/** Why `policy`'s cap refuses an operation whose worst case is `worstCase` wei, or undefined when it fits. */
async function capRefusal(policy: CostCap, worstCase: bigint, input: RuleInput): Promise<string | undefined> {
  const cap = capOf(policy);
  if (!cap.usd) {
    if (worstCase <= cap.units) return undefined;
    return (
      `Cost cap "${policy.name}" exceeded: this operation may cost up to ${weiToEther(worstCase)} ETH, ` +
      `above the cap of ${weiToEther(cap.units)} ETH per operation`
    );
  }
  const reading = input.nativeUsdPrice
    ? await input.nativeUsdPrice.read()
    : { ok: false as const, reason: "No native token price is available" };
  if (!reading.ok) return `Cost cap "${policy.name}" (USD) cannot be checked: ${reading.reason}`;
  // Rounded up: a cost a fraction of a unit above the cap is above it.
  const worstCaseUsd = weiToUsdUnits(worstCase, reading.price);
  if (worstCaseUsd <= cap.units) return undefined;
  return (
    `Cost cap "${policy.name}" exceeded: this operation may cost up to ${usdUnitsToDollars(worstCaseUsd)} USD ` +
    `(${weiToEther(worstCase)} ETH at ${priceText(reading.price)} USD), above the cap of ` +
    `${usdUnitsToDollars(cap.units)} USD per operation`
  );
}

/**
 * Rule 4: no operation may cost more, at worst, than any active MAX_COST_PER_OP cap allows. The worst case is the most
 * the EntryPoint can charge the deposit for it, whatever its version (operationView); a USD cap compares it in
 * dollars at the chain's native token price, rounded up. Fail-closed: a USD cap without a usable price (none
 * configured, stale, unreadable, not positive) refuses rather than sponsoring unchecked (a cap whose stored settings
 * cannot be read never gets here: rule 1 refuses).
 */
export const maxCostPerOp: Rule = {
  name: RULE,
  async evaluate(input) {
    const caps = policiesOfKind(input.setup.policies, "MAX_COST_PER_OP");
    if (caps.length === 0) return pass(RULE);
    const worstCase = input.version.worstCaseCostWei(input.userOp);
    for (const policy of caps) {
      const refusal = await capRefusal(policy, worstCase, input);
      if (refusal !== undefined) return refuse(RULE, refusal);
    }
    return pass(RULE);
  },
};
