// SPONSORED mode as a step asks for it: our verifying paymaster (src/bindings/paymasters/verifying.ts), the dApp's
// deposit pays and the setup's rules decide. Its terms need nothing read: the funding wallet and the window.
import { verifyingPaymaster } from "../../bindings/paymasters/verifying";
import type { SmartAccountInfo } from "../../sponsorship/callData";
import type { KindChoice } from "../stepRequest";

export interface SponsoredRequest {
  expirySeconds: number;
  calculateGasLimits?: boolean;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
}

export function sponsoredKind(request: SponsoredRequest): KindChoice {
  return {
    decisionMode: "sponsored",
    expirySeconds: request.expirySeconds,
    calculateGasLimits: request.calculateGasLimits === true,
    ...(request.smartAccount ? { smartAccount: request.smartAccount } : {}),
    ...(request.webhookData ? { webhookData: request.webhookData } : {}),
    choose: async () => verifyingPaymaster,
  };
}
