import { createKeccak } from "hash-wasm";
import { bytesToHex, type Hex, hexToBytes } from "viem";

// Keccak-256 in WebAssembly: about twelve times faster than viem's pure-JS keccak on this machine (1.4 µs against
// 22 µs for 200 bytes), and a sponsorship computes about ten of them. One hasher serves every call: JavaScript runs
// one call at a time and each call finishes before it returns.
const hasher = await createKeccak(256);

export function keccak256Bytes(data: Uint8Array): Uint8Array {
  hasher.init();
  hasher.update(data);
  return hasher.digest("binary");
}

/** The same result as viem's `keccak256` for hex input, as hex. */
export function keccak256(data: Hex | Uint8Array): Hex {
  return bytesToHex(keccak256Bytes(typeof data === "string" ? hexToBytes(data) : data));
}
