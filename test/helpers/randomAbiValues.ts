// Random values for the tests that pin our fixed-layout ABI encoding to viem's: every width of an unsigned integer
// (zero and the type's maximum among them), byte strings of the lengths that cross word boundaries, and addresses both
// checksummed and in lower case.
import { randomBytes } from "node:crypto";
import { type Address, bytesToHex, getAddress, type Hex } from "viem";

export const randomInt = (below: number) => Math.floor(Math.random() * below);

/** A random unsigned integer of up to `bits` bits, its edges (0 and the maximum) one time in five. */
export function randomUint(bits: number): bigint {
  const pick = randomInt(10);
  if (pick === 0) return 0n;
  if (pick === 1) return (1n << BigInt(bits)) - 1n;
  const width = 1 + randomInt(bits);
  return BigInt(bytesToHex(randomBytes(Math.ceil(bits / 8)))) & ((1n << BigInt(width)) - 1n);
}

export const randomAddress = (): Address => {
  const address = bytesToHex(randomBytes(20));
  return randomInt(2) === 0 ? address : getAddress(address);
};

export const randomHexBytes = (): Hex => bytesToHex(randomBytes([0, 1, 31, 32, 33, 100, 1000][randomInt(7)] as number));
