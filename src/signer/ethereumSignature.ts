// What a hardware module's ECDSA gives and what the EntryPoint's paymasters accept differ: PKCS#11's CKM_ECDSA returns
// r ‖ s (64 bytes) with either s, and no recovery id; our contracts take r ‖ s ‖ v (65 bytes) with s in the lower
// half of the curve order (EIP-2; OpenZeppelin's ECDSA reverts on a high s) and v 27 or 28. The recovery id is found
// by recovering the public key from the signature and comparing it with the key's own.
import { bytesToHex, type Hex, recoverPublicKey } from "viem";
import { loadNative, SECP256K1_ORDER } from "./signer";

const HALF_ORDER = SECP256K1_ORDER / 2n;

const toBigInt = (bytes: Uint8Array) => BigInt(bytesToHex(bytes));
const to32Bytes = (value: bigint) => Uint8Array.from(Buffer.from(value.toString(16).padStart(64, "0"), "hex"));

/**
 * The 65-byte Ethereum signature of `digest` from a raw ECDSA (r, s) by the key whose uncompressed public key (0x04 ‖
 * X ‖ Y, 65 bytes) is `publicKey`. Throws when (r, s) is not a signature of `digest` by that key: a module that signed
 * with another key, or answered garbage, must not yield a signature the contract would refuse only later.
 */
export async function ethereumSignature(rs: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): Promise<Hex> {
  if (rs.length !== 64) throw new Error(`the module's ECDSA signature is ${rs.length} bytes, not r ‖ s (64)`);
  const r = toBigInt(rs.subarray(0, 32));
  let s = toBigInt(rs.subarray(32));
  if (r === 0n || s === 0n || r >= SECP256K1_ORDER || s >= SECP256K1_ORDER) {
    throw new Error("the module's ECDSA signature is out of the secp256k1 range");
  }
  // (r, n - s) is the same signature for the other point of the pair; EIP-2 takes the lower one.
  if (s > HALF_ORDER) s = SECP256K1_ORDER - s;
  const compact = new Uint8Array(64);
  compact.set(rs.subarray(0, 32));
  compact.set(to32Bytes(s), 32);
  for (const recoveryId of [0, 1]) {
    if (equalBytes(await recover(compact, recoveryId, digest), publicKey)) {
      const signature = new Uint8Array(65);
      signature.set(compact);
      signature[64] = 27 + recoveryId;
      return bytesToHex(signature);
    }
  }
  throw new Error("the module's ECDSA signature does not recover to the token key's public key");
}

/** The uncompressed public key that (compact, recoveryId) over `digest` recovers to; natively when the binding loads. */
async function recover(compact: Uint8Array, recoveryId: number, digest: Uint8Array): Promise<Uint8Array> {
  const native = loadNative();
  if (native) {
    try {
      return native.ecdsaRecover(compact, recoveryId, digest, false);
    } catch {
      // No point recovers with this id (r is not the x of a curve point for that parity).
      return new Uint8Array(0);
    }
  }
  try {
    const key = await recoverPublicKey({
      hash: digest,
      signature: { r: bytesToHex(compact.subarray(0, 32)), s: bytesToHex(compact.subarray(32)), yParity: recoveryId },
    });
    return Uint8Array.from(Buffer.from(key.slice(2), "hex"));
  } catch {
    return new Uint8Array(0);
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
