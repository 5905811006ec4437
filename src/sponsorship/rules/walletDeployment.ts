import { pass, type Rule, refuse } from "../rule";

/** Rule 2: deploying an account (non-empty initCode) is paid for only under an active WALLET_DEPLOYMENT rule. */
export const walletDeployment: Rule = {
  name: "walletDeployment",
  evaluate({ setup, userOp }) {
    if (userOp.initCode === "0x") return pass(this.name);
    if (setup.policies.some((policy) => policy.policyType === "WALLET_DEPLOYMENT")) return pass(this.name);
    return refuse(
      this.name,
      "Wallet deployment is not sponsored: the operation has initCode and no active WALLET_DEPLOYMENT policy",
    );
  },
};
