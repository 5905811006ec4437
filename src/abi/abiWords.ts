// Fixed-layout ABI encoding for the hot path: the static 32-byte words of abi.encode written straight as hex, without
// viem's general encoder (about three times faster for the two hashes of a sponsorship). Pinned to viem's
// encodeAbiParameters by test/chain/fixedLayoutHashes.test.ts (EntryPoint v0.6) and fixedLayoutHashesV07.test.ts
// (v0.7 and v0.8).
import type { Hex } from "viem";
import { keccak256Bytes } from "./keccak";

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})*$/;
const BYTES32 = /^0x[0-9a-fA-F]{64}$/;
const MAX_UINT256 = 2n ** 256n - 1n;
const ZEROS = "0".repeat(64);

/** A left-padded word of 64 hex digits, without 0x. */
const pad = (digits: string) => ZEROS.slice(digits.length) + digits;

/** An address as one word. Its checksum, when mixed case, is the parser's to check; here only the form matters. */
export function addressWord(field: string, value: string): string {
  if (!ADDRESS.test(value)) throw new TypeError(`${field} is not an address: ${value}`);
  return pad(value.slice(2).toLowerCase());
}

/** An unsigned integer as one word; it must fit `bits`. */
export function uintWord(field: string, value: bigint | number, bits = 256): string {
  const n = typeof value === "bigint" ? value : BigInt(value);
  const max = bits === 256 ? MAX_UINT256 : (1n << BigInt(bits)) - 1n;
  if (n < 0n || n > max) throw new RangeError(`${field} must be a uint${bits}, got ${value}`);
  return pad(n.toString(16));
}

/** Bytes given as hex, as raw bytes (no 0x in `hex`); the hex must be whole bytes. */
function hexToBuffer(field: string, value: Hex): Buffer {
  if (!HEX_BYTES.test(value)) throw new TypeError(`${field} is not hex bytes: ${value.slice(0, 20)}…`);
  return Buffer.from(value.slice(2), "hex");
}

/** The last input and its hash word, per field name (initCode, callData, paymasterAndData: a handful of names). */
const lastByField = new Map<string, { input: string; word: string }>();

/**
 * keccak-256 of a byte field, as one word. A sponsorship's paymaster hash and user operation hash both hash the same
 * initCode and callData a moment apart, so each field's last answer is kept for the next call: the same text (the same
 * string, compared by reference first) is not hashed again.
 */
export function bytesHashWord(field: string, value: Hex): string {
  const last = lastByField.get(field);
  if (last !== undefined && last.input === value) return last.word;
  const word = Buffer.from(keccak256Bytes(hexToBuffer(field, value))).toString("hex");
  lastByField.set(field, { input: value, word });
  return word;
}

/** A bytes32 given as hex (a hash, or two packed uint128), as one word. */
export function bytes32Word(field: string, value: Hex): string {
  if (!BYTES32.test(value)) throw new TypeError(`${field} is not 32 bytes of hex: ${value.slice(0, 20)}…`);
  return value.slice(2).toLowerCase();
}

/** keccak-256 of words given as hex digits without 0x, as a 0x hash. */
export function keccakOfWords(words: string): Hex {
  return `0x${Buffer.from(keccak256Bytes(Buffer.from(words, "hex"))).toString("hex")}`;
}
