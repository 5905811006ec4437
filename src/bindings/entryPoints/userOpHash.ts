import type { Address, Hex } from "viem";
import { addressWord, bytesHashWord, keccakOfWords, uintWord } from "../../abi/abiWords";
import { signedFieldWords, type UserOperation } from "./userOperation";

/**
 * EntryPoint v0.6's getUserOpHash: the id under which the operation's events appear on chain.
 * keccak(abi.encode(keccak(abi.encode(signed fields, keccak(paymasterAndData))), entryPoint, chainId)), in fixed
 * layout (byte for byte viem's getUserOperationHash, as test/chain/fixedLayoutHashes.test.ts checks).
 */
export function getUserOpHash(userOp: Omit<UserOperation, "signature">, entryPoint: Address, chainId: number): Hex {
  const packed = signedFieldWords(userOp) + bytesHashWord("paymasterAndData", userOp.paymasterAndData);
  const inner = keccakOfWords(packed).slice(2);
  return keccakOfWords(inner + addressWord("entryPoint", entryPoint) + uintWord("chainId", chainId));
}
