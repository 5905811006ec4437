import type { Address, Hex } from "viem";
import { invalidParams } from "./rpcError";

/**
 * Readers for the fields of an RPC request. Every failure is -32602 with a message that names the field as the client
 * sent it (`params[0].nonce`) and what is wrong with it.
 */
export type Fields = Record<string, unknown>;

const MAX_UINT256 = (1n << 256n) - 1n;
const HEX_NUMBER = /^0x[0-9a-fA-F]{1,64}$/;
const DECIMAL = /^\d{1,78}$/;
const HEX_BYTES = /^0x([0-9a-fA-F]{2})*$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function object(value: unknown, label: string): Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidParams(`${label} must be an object`);
  }
  return value as Fields;
}

/** A uint as `0x` hex, a decimal string or a JSON number (clients send all three), at most `max`. */
export function uint(value: unknown, label: string, max = MAX_UINT256): bigint {
  let parsed: bigint | undefined;
  if (typeof value === "number" && Number.isSafeInteger(value) && value >= 0) parsed = BigInt(value);
  else if (typeof value === "string" && (HEX_NUMBER.test(value) || DECIMAL.test(value))) parsed = BigInt(value);
  if (parsed === undefined) {
    throw invalidParams(`${label} must be a non-negative integer as 0x hex, a decimal string or a number`);
  }
  if (parsed > max) throw invalidParams(`${label} must be at most ${max}`);
  return parsed;
}

export function address(value: unknown, label: string): Address {
  if (value === undefined || value === null) throw invalidParams(`${label} is required`);
  if (typeof value !== "string" || !ADDRESS.test(value)) {
    throw invalidParams(`${label} must be an address: 0x followed by 40 hex digits`);
  }
  return value.toLowerCase() as Address;
}

/** Bytes as 0x-prefixed hex of whole bytes; absent counts as empty (`0x`). */
export function bytes(value: unknown, label: string): Hex {
  if (value === undefined || value === null) return "0x";
  if (typeof value !== "string" || !HEX_BYTES.test(value)) {
    throw invalidParams(`${label} must be 0x-prefixed hex of whole bytes`);
  }
  return value.toLowerCase() as Hex;
}

export function optionalBoolean(value: unknown, label: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw invalidParams(`${label} must be true or false`);
  return value;
}
