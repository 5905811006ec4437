import type { Address, Hex } from "viem";
import { addressWord, bytesHashWord, uintWord } from "../../abi/abiWords";
import type { PaymasterHashPlace } from "./entryPointVersion";

/** The account's gas limits and fees: the same five fields in every EntryPoint version's operation. */
export interface AccountGasAndFees {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** An ERC-4337 user operation as EntryPoint v0.6 takes it; the field names match the ABI struct, so viem encodes it as is. */
export interface UserOperation extends AccountGasAndFees {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  paymasterAndData: Hex;
  signature: Hex;
}

/** The fields a paymaster signature covers: all but the two that carry signatures. */
export type UserOperationSignedFields = Omit<UserOperation, "paymasterAndData" | "signature">;

/**
 * The signed fields as both the paymaster hash and the EntryPoint's user operation hash encode them (byte fields by
 * their keccak-256), written word by word:
 * nine words as hex digits without 0x. The hot path's form (both hashes of a sponsorship start with it).
 */
/**
 * The first four words every version's paymaster hash starts with: the sender, its nonce, and the hashes of initCode
 * and callData (v0.7 on: the factory and its data packed into initCode).
 */
export function accountWords(userOp: Pick<UserOperationSignedFields, "sender" | "nonce" | "initCode" | "callData">) {
  return (
    addressWord("sender", userOp.sender) +
    uintWord("nonce", userOp.nonce) +
    bytesHashWord("initCode", userOp.initCode) +
    bytesHashWord("callData", userOp.callData)
  );
}

export function signedFieldWords(userOp: UserOperationSignedFields): string {
  return (
    accountWords(userOp) +
    uintWord("callGasLimit", userOp.callGasLimit) +
    uintWord("verificationGasLimit", userOp.verificationGasLimit) +
    uintWord("preVerificationGas", userOp.preVerificationGas) +
    uintWord("maxFeePerGas", userOp.maxFeePerGas) +
    uintWord("maxPriorityFeePerGas", userOp.maxPriorityFeePerGas)
  );
}

/** What v0.6 paymasters hash first: the nine signed fields, the chain id and the paymaster; each kind's terms follow. */
export function paymasterHashPrefixV06(op: UserOperationSignedFields, place: PaymasterHashPlace): string {
  return signedFieldWords(op) + uintWord("chainId", place.chainId) + addressWord("paymaster", place.paymaster);
}
