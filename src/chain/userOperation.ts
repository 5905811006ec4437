import type { Address, Hex } from "viem";

/** An ERC-4337 user operation as EntryPoint v0.6 takes it; the field names match the ABI struct, so viem encodes it as is. */
export interface UserOperation {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  paymasterAndData: Hex;
  signature: Hex;
}

/** The fields a paymaster signature covers: all but the two that carry signatures. */
export type UserOperationSignedFields = Omit<UserOperation, "paymasterAndData" | "signature">;
