import { type Address, encodeAbiParameters, type Hex } from "viem";
import { keccak256 } from "./keccak";
import { signedFieldParameters, signedFieldValues, type UserOperation } from "./userOperation";

const packedParameters = [...signedFieldParameters, { name: "paymasterAndDataHash", type: "bytes32" }] as const;

/** EntryPoint v0.6's getUserOpHash: the id under which the operation's events appear on chain. */
export function getUserOpHash(userOp: Omit<UserOperation, "signature">, entryPoint: Address, chainId: number): Hex {
  const packed = encodeAbiParameters(packedParameters, [
    ...signedFieldValues(userOp),
    keccak256(userOp.paymasterAndData),
  ]);
  return keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "address" }, { type: "uint256" }],
      [keccak256(packed), entryPoint, BigInt(chainId)],
    ),
  );
}
