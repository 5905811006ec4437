import { pass, type Rule, refuse } from "../rule";

/** The SDK recognises this text and tells the developer what to do. */
export const NO_POLICIES_REASON =
  "No policies were set on the dashboard. Please set policies to allow gas sponsorship via paymasters";
export const NO_FUNDING_WALLET_REASON =
  "No funding wallet is linked to this paymaster: link one through funding-message and the paymaster update";

/** Rule 1: someone pays (a funding wallet) and the dApp said what it pays for (a rule or a whitelisted contract). */
export const fundingAndRules: Rule = {
  name: "fundingAndRules",
  evaluate({ setup }) {
    if (!setup.fundingAddress) return refuse(this.name, NO_FUNDING_WALLET_REASON);
    if (setup.policies.length === 0 && setup.contracts.size === 0) return refuse(this.name, NO_POLICIES_REASON);
    return pass(this.name);
  },
};
