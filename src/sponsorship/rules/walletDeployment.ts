import { viewOf } from "../operationView";
import { pass, type Rule, refuse } from "../rule";

/**
 * Rule 2: deploying an account is paid for only under an active WALLET_DEPLOYMENT rule. What deploys depends on the
 * version (v0.6 initCode, v0.7 a factory, v0.8 also an EIP-7702 authorization): see operationView.
 */
export const walletDeployment: Rule = {
  name: "walletDeployment",
  evaluate({ setup, userOp }) {
    const { deployment } = viewOf(userOp);
    if (deployment === undefined) return pass(this.name);
    if (setup.policies.some((policy) => policy.policyType === "WALLET_DEPLOYMENT")) return pass(this.name);
    return refuse(
      this.name,
      `Wallet deployment is not sponsored: the operation has ${deployment} and no active WALLET_DEPLOYMENT policy`,
    );
  },
};
