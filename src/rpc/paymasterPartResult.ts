import { toHex } from "viem";
import type { PaymasterAnswerPart, PaymasterFieldsV07 } from "../actions/stepRequest";

/** The paymaster fields of a v0.7-on answer as ERC-7677 and Pimlico give them: numbers as hex quantities. */
export function paymasterFieldsResult(fields: PaymasterFieldsV07) {
  return {
    paymaster: fields.paymaster,
    paymasterData: fields.paymasterData,
    paymasterVerificationGasLimit: toHex(fields.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: toHex(fields.paymasterPostOpGasLimit),
  };
}

/** Our part of an answer as ERC-7677 gives it, in the shape the version answered (EntryPointVersion.answerPart). */
export function paymasterPartResult(part: PaymasterAnswerPart) {
  return "paymasterAndData" in part ? { paymasterAndData: part.paymasterAndData } : paymasterFieldsResult(part);
}

/** v0.6's paymasterAndData, from an answer for a v0.6 operation (the only version answered in that shape). */
export function paymasterAndDataOf(part: PaymasterAnswerPart) {
  if (!("paymasterAndData" in part)) throw new Error("a v0.6 answer carries paymasterAndData");
  return part.paymasterAndData;
}
