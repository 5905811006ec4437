import { pass, type Rule, refuse } from "../rule";
import { senderDeploymentOf } from "../senderDeployment";

/**
 * Rule 2: deploying an account is paid for only under an active WALLET_DEPLOYMENT rule. What names a deployment
 * depends on the version (v0.6 initCode, v0.7 a factory, v0.8 and later also an EIP-7702 authorization: see
 * operationView); whether it deploys anything is the sender's code on chain (senderDeployment.ts). A sender that has
 * code and still names a factory is refused whatever the policies say: v0.6 to v0.8 would fail it (AA10), and v0.9
 * would skip the factory and run the call, which must not pass as a deployment.
 */
export const walletDeployment: Rule = {
  name: "walletDeployment",
  async evaluate(input) {
    const reading = await senderDeploymentOf(input).read();
    const sender = input.userOp.sender.toLowerCase();
    switch (reading.state) {
      case "none":
        return reading.note ? { ...pass(this.name), reason: reading.note } : pass(this.name);
      case "deployed":
        return refuse(
          this.name,
          `The sender ${sender} is already deployed (it has code), yet the operation has ${reading.what}: ` +
            "remove it, as nothing would be deployed",
        );
      case "unknown":
        return refuse(
          this.name,
          `Could not read whether the sender ${sender} is deployed, which decides whether ${reading.what} deploys ` +
            `it: ${reading.error}`,
        );
      case "deploys": {
        if (!input.setup.policies.some((policy) => policy.policyType === "WALLET_DEPLOYMENT")) {
          return refuse(
            this.name,
            `Wallet deployment is not sponsored: the operation has ${reading.what} and no active WALLET_DEPLOYMENT policy`,
          );
        }
        return reading.note ? { ...pass(this.name), reason: reading.note } : pass(this.name);
      }
    }
  },
};
