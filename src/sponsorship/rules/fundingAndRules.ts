import type { UnreadablePolicy } from "../../storage/policies";
import { pass, type Rule, refuse } from "../rule";

/** The SDK recognises this text and tells the developer what to do. */
export const NO_POLICIES_REASON =
  "No policies were set on the dashboard. Please set policies to allow gas sponsorship via paymasters";
export const NO_FUNDING_WALLET_REASON =
  "No funding wallet is linked to this paymaster: link one through funding-message and the paymaster update";

/**
 * Why nothing is sponsored while an active rule's stored settings cannot be read: skipping the rule would sponsor what
 * it may forbid.
 */
const unreadablePolicyReason = (policy: UnreadablePolicy) =>
  `Policy "${policy.name}" (${policy.policyType}) has unreadable settings: ${policy.unreadable}; ` +
  "nothing is sponsored until the dApp replaces its settings or turns it off";

/**
 * Rule 1: someone pays (a funding wallet), every active rule can be read (fail-closed: an unreadable one refuses
 * everything) and the dApp said what it pays for (a rule or a whitelisted contract).
 */
export const fundingAndRules: Rule = {
  name: "fundingAndRules",
  evaluate({ setup }) {
    if (!setup.fundingAddress) return refuse(this.name, NO_FUNDING_WALLET_REASON);
    const [unreadable] = setup.unreadablePolicies ?? [];
    if (unreadable) return refuse(this.name, unreadablePolicyReason(unreadable));
    if (setup.policies.length === 0 && setup.contracts.size === 0) return refuse(this.name, NO_POLICIES_REASON);
    return pass(this.name);
  },
};
