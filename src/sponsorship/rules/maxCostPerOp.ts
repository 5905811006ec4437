import type { Policy } from "../../storage/policies";
import { worstCaseCost } from "../operationView";
import { pass, type Rule, refuse } from "../rule";
import { etherToWei, weiToEther } from "../spendingLimit";

const RULE = "maxCostPerOp";

/** The cap in wei, or undefined when the stored data is not a positive ether amount (then the rule refuses). */
function capWei(policy: Policy): bigint | undefined {
  const { threshold, thresholdType } = policy.policyData;
  if (thresholdType !== "NATIVE_ASSET" || typeof threshold !== "number" || !(threshold > 0)) return undefined;
  return etherToWei(threshold);
}

/**
 * Rule 4: no operation may cost more, at worst, than any active MAX_COST_PER_OP cap allows. The worst case is the most
 * the EntryPoint can charge the deposit for it, whatever its version (operationView). Fail-closed: a cap whose data
 * cannot be read refuses everything rather than sponsoring without a cap.
 */
export const maxCostPerOp: Rule = {
  name: RULE,
  evaluate({ setup, userOp }) {
    const caps = setup.policies.filter((policy) => policy.policyType === "MAX_COST_PER_OP");
    if (caps.length === 0) return pass(RULE);
    const worstCase = worstCaseCost(userOp);
    for (const policy of caps) {
      const cap = capWei(policy);
      if (cap === undefined) return refuse(RULE, `Cost cap "${policy.name}" has unreadable settings`);
      if (worstCase > cap) {
        return refuse(
          RULE,
          `Cost cap "${policy.name}" exceeded: this operation may cost up to ${weiToEther(worstCase)} ETH, ` +
            `above the cap of ${weiToEther(cap)} ETH per operation`,
        );
      }
    }
    return pass(RULE);
  },
};
