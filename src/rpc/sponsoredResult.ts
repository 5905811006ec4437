import type { StepAnswer } from "../actions/stepRequest";
import type { SponsoredResult } from "../schemas/rpc/pm_sponsorUserOperation";
import { paymasterAndDataOf } from "./paymasterPartResult";

/**
 * The result shape of docs/sponsorship-rpc.md, 'Result': both spellings of mode (the SDK reads `mode`),
 * `preVerificationGas` as a decimal string and the two limits as JSON numbers: exactly the values the signature covers.
 */
export function sponsoredResult(answer: StepAnswer): SponsoredResult {
  return {
    mode: "SPONSORED" as const,
    MODE: "SPONSORED" as const,
    paymasterAndData: paymasterAndDataOf(answer.part),
    preVerificationGas: answer.preVerificationGas.toString(),
    verificationGasLimit: Number(answer.verificationGasLimit),
    callGasLimit: Number(answer.callGasLimit),
    ...(answer.reason ? { reason: answer.reason } : {}),
  };
}
