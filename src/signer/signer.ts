// The verifying signer: EIP-191 personal_sign over a 32-byte hash, the only signature the paymaster contract accepts.
// Two implementations give byte-identical signatures (both RFC 6979 nonces, low s): the native libsecp256k1 binding,
// about five times faster on the sponsorship hot path (bench/signer.ts: ~70 µs against ~370 µs per hash + sign), and
// viem's pure JavaScript as the fallback where no prebuilt binary exists.
import { createRequire } from "node:module";
import { inspect } from "node:util";
import { type Address, bytesToHex, concat, type Hex, hexToBigInt, hexToBytes, isHex, size, stringToBytes } from "viem";
import { privateKeyToAddress, signMessage } from "viem/accounts";
import { keccak256Bytes } from "../abi/keccak";

/** Where the key is: in this process's memory (from a key file or the environment), or in a PKCS#11 token. */
export type SignerKind = "key" | "pkcs11";

export interface Signer {
  readonly kind: SignerKind;
  readonly address: Address;
  /** EIP-191 personal_sign over the 32 raw bytes of `hash`: 65 bytes r,s,v with v 27 or 28. */
  signHash(hash: Hex): Promise<Hex>;
}

export type SignerImplementation = "native" | "viem";

type Secp256k1 = typeof import("secp256k1");

let native: Secp256k1 | null | undefined;

/** The binding itself, not the package main: that one silently falls back to a pure-JS curve, hiding a slow signer. */
export function loadNative(): Secp256k1 | null {
  if (native === undefined) {
    try {
      native = createRequire(import.meta.url)("secp256k1/bindings") as Secp256k1;
    } catch {
      native = null;
    }
  }
  return native;
}

export function isNativeSignerAvailable(): boolean {
  return loadNative() !== null;
}

export const SECP256K1_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const EIP191_PREFIX = stringToBytes("\x19Ethereum Signed Message:\n32");

export function checkHash(hash: Hex): void {
  if (!isHex(hash, { strict: true }) || size(hash) !== 32) throw new TypeError("signHash takes a 32-byte hex hash");
}

/** The digest an EIP-191 personal_sign of the 32 raw bytes of `hash` signs: keccak256("\x19Ethereum Signed Message:\n32" ‖ hash). */
export function personalSignDigest(hash: Hex): Uint8Array {
  return keccak256Bytes(concat([EIP191_PREFIX, hexToBytes(hash)]));
}

/** Holds the key in a private field and prints as its address only, whatever logs or serialises it. */
abstract class KeySigner implements Signer {
  readonly kind = "key";
  abstract readonly implementation: SignerImplementation;
  constructor(readonly address: Address) {}
  abstract signHash(hash: Hex): Promise<Hex>;
  toString(): string {
    return `Signer(${this.address})`;
  }
  toJSON(): { address: Address } {
    return { address: this.address };
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

class NativeSigner extends KeySigner {
  readonly implementation = "native";
  readonly #key: Uint8Array;
  readonly #secp: Secp256k1;

  constructor(privateKey: Hex, secp: Secp256k1) {
    super(privateKeyToAddress(privateKey));
    this.#key = hexToBytes(privateKey);
    this.#secp = secp;
  }

  async signHash(hash: Hex): Promise<Hex> {
    checkHash(hash);
    const digest = personalSignDigest(hash);
    const { signature, recid } = this.#secp.ecdsaSign(digest, this.#key);
    const rsv = new Uint8Array(65);
    rsv.set(signature);
    rsv[64] = 27 + recid;
    return bytesToHex(rsv);
  }
}

class ViemSigner extends KeySigner {
  readonly implementation = "viem";
  readonly #key: Hex;

  constructor(privateKey: Hex) {
    super(privateKeyToAddress(privateKey));
    this.#key = privateKey;
  }

  async signHash(hash: Hex): Promise<Hex> {
    checkHash(hash);
    return signMessage({ message: { raw: hash }, privateKey: this.#key });
  }
}

/**
 * The native signer when its binding loads, else viem's; `implementation` forces one (and "native" fails loudly where
 * the binding is missing rather than quietly running five times slower).
 */
export function createSigner(
  privateKey: Hex,
  options: { implementation?: SignerImplementation } = {},
): Signer & { readonly implementation: SignerImplementation } {
  // Checked here, before any library sees the key: the curve library's own range error prints the key in decimal, and
  // this message may well end up in a log.
  if (!isHex(privateKey, { strict: true }) || size(privateKey) !== 32) {
    throw new TypeError("signer private key must be 32 bytes of 0x-prefixed hex");
  }
  const scalar = hexToBigInt(privateKey);
  if (scalar === 0n || scalar >= SECP256K1_ORDER)
    throw new TypeError("signer private key is out of the secp256k1 range");
  const secp = loadNative();
  if (options.implementation === "viem" || (options.implementation === undefined && secp === null)) {
    return new ViemSigner(privateKey);
  }
  if (secp === null) throw new Error("native secp256k1 binding is not available on this platform");
  return new NativeSigner(privateKey, secp);
}
