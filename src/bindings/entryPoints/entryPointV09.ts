// EntryPoint v0.9: its canonical address and the paymaster signature suffix it reads. v0.9 takes v0.7's packed user
// operation and v0.8's EIP-712 user operation hash; what is new for a paymaster is a signature placed after
// paymasterData, which the user operation hash leaves out, so the wallet and the paymaster can sign at the same time:
//   paymasterAndData = paymaster ++ two gas limits ++ paymasterData ++ paymasterSignature ++ uint16(len) ++ MAGIC
// When the field ends with MAGIC, the hash covers paymasterAndData without the signature and its length but with MAGIC.
import { type Address, concat, type Hex, numberToHex, size } from "viem";

/** EntryPoint v0.9 (eth-infinitism v0.9.0), at the same address on every chain (CREATE2 deployer). */
export const ENTRY_POINT_V09_ADDRESS: Address = "0x433709009B8330FDa32311DF1C2AFA402eD8D009";

/** The first 8 bytes of keccak256("PaymasterSignature"): the suffix's end marker. */
export const PAYMASTER_SIGNATURE_MAGIC: Hex = "0x22e325a297439656";

/** What paymasterAndData carries after paymasterData when the paymaster signs apart: signature, its length, magic. */
export function paymasterSignatureSuffix(paymasterSignature: Hex): Hex {
  return concat([paymasterSignature, numberToHex(size(paymasterSignature), { size: 2 }), PAYMASTER_SIGNATURE_MAGIC]);
}

/**
 * A placeholder paymasterSignature of the real one's length (65 bytes, r ++ s ++ v): what a wallet puts on the
 * operation before it signs, so that its hash has the magic in it. It recovers to nobody.
 */
export const PAYMASTER_SIGNATURE_PLACEHOLDER: Hex = `0x${"ff".repeat(64)}1c`;
