import type { SponsorAnswer } from "../actions/signOperation";
import type { SponsoredResult } from "../schemas/rpc/pm_sponsorUserOperation";

/**
 * The result shape of docs/sponsorship-rpc.md, 'Result': both spellings of mode (the SDK reads `mode`),
 * `preVerificationGas` as a decimal string and the two limits as JSON numbers: exactly the values the signature covers.
 */
export function sponsoredResult(answer: SponsorAnswer): SponsoredResult {
  return {
    mode: "SPONSORED" as const,
    MODE: "SPONSORED" as const,
    paymasterAndData: answer.paymasterAndData,
    preVerificationGas: answer.preVerificationGas.toString(),
    verificationGasLimit: Number(answer.verificationGasLimit),
    callGasLimit: Number(answer.callGasLimit),
    ...(answer.reason ? { reason: answer.reason } : {}),
  };
}
