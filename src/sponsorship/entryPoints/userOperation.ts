import type { Address, Hex } from "viem";
import { addressWord, bytesHashWord, uintWord } from "../../abi/abiWords";
import { keccak256 } from "../../abi/keccak";

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

/**
 * The signed fields as both the paymaster hash and the EntryPoint's user operation hash encode them: the byte fields
 * as their keccak-256, everything else as is.
 */
export const signedFieldParameters = [
  { name: "sender", type: "address" },
  { name: "nonce", type: "uint256" },
  { name: "initCodeHash", type: "bytes32" },
  { name: "callDataHash", type: "bytes32" },
  { name: "callGasLimit", type: "uint256" },
  { name: "verificationGasLimit", type: "uint256" },
  { name: "preVerificationGas", type: "uint256" },
  { name: "maxFeePerGas", type: "uint256" },
  { name: "maxPriorityFeePerGas", type: "uint256" },
] as const;

export function signedFieldValues(userOp: UserOperationSignedFields) {
  return [
    userOp.sender,
    userOp.nonce,
    keccak256(userOp.initCode),
    keccak256(userOp.callData),
    userOp.callGasLimit,
    userOp.verificationGasLimit,
    userOp.preVerificationGas,
    userOp.maxFeePerGas,
    userOp.maxPriorityFeePerGas,
  ] as const;
}

/**
 * The same encoding as `encodeAbiParameters(signedFieldParameters, signedFieldValues(userOp))`, written word by word:
 * nine words as hex digits without 0x. The hot path's form (both hashes of a sponsorship start with it).
 */
export function signedFieldWords(userOp: UserOperationSignedFields): string {
  return (
    addressWord("sender", userOp.sender) +
    uintWord("nonce", userOp.nonce) +
    bytesHashWord("initCode", userOp.initCode) +
    bytesHashWord("callData", userOp.callData) +
    uintWord("callGasLimit", userOp.callGasLimit) +
    uintWord("verificationGasLimit", userOp.verificationGasLimit) +
    uintWord("preVerificationGas", userOp.preVerificationGas) +
    uintWord("maxFeePerGas", userOp.maxFeePerGas) +
    uintWord("maxPriorityFeePerGas", userOp.maxPriorityFeePerGas)
  );
}
