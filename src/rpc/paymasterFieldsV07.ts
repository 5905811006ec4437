import { toHex } from "viem";
import type { PaymasterFieldsV07 } from "../actions/stepRequest";

/** The paymaster fields of a v0.7/v0.8 answer as ERC-7677 and Pimlico give them: numbers as hex quantities. */
export function paymasterFieldsResult(fields: PaymasterFieldsV07) {
  return {
    paymaster: fields.paymaster,
    paymasterData: fields.paymasterData,
    paymasterVerificationGasLimit: toHex(fields.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: toHex(fields.paymasterPostOpGasLimit),
  };
}
