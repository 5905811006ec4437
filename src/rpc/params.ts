import { type Address, type Hex, maxUint256 } from "viem";
import { invalidParams } from "../errors";
import { AnyObject, RpcAddress, RpcBoolean, RpcBytes, RpcUint } from "../schemas/rpc/fields";
import { schemaCheck } from "./schemaCheck";

/**
 * Readers for single values of an RPC request, each the compiled check of its schema (src/schemas/rpc/fields.ts).
 * Every failure is -32602 with a message that names the value as the client sent it (`params[0].nonce`) and what is
 * wrong with it. Whole params positions are read by their own schemas (userOperationInput.ts, mode.ts).
 */
export type Fields = Record<string, unknown>;

const uintCheck = schemaCheck<typeof RpcUint, string | number>(RpcUint);
const addressCheck = schemaCheck<typeof RpcAddress, string>(RpcAddress);
const bytesCheck = schemaCheck<typeof RpcBytes, string>(RpcBytes);
const booleanCheck = schemaCheck<typeof RpcBoolean, boolean>(RpcBoolean);
const objectCheck = schemaCheck<typeof AnyObject, Fields>(AnyObject);

export function object(value: unknown, label: string): Fields {
  return objectCheck.read(value, label);
}

/** A uint as `0x` hex, a decimal string or a JSON number (clients send all three), at most `max`. */
export function uint(value: unknown, label: string, max = maxUint256): bigint {
  return inRange(BigInt(uintCheck.read(value, label)), label, max);
}

/** A value already checked as a uint (by its position's schema), read as a bigint no greater than `max`. */
export function inRange(value: bigint, label: string, max: bigint): bigint {
  if (value > max) throw invalidParams(`${label} must be at most ${max}`);
  return value;
}

export function address(value: unknown, label: string): Address {
  return addressCheck.read(value ?? undefined, label).toLowerCase() as Address;
}

/** Bytes as 0x-prefixed hex of whole bytes; absent counts as empty (`0x`). */
export function bytes(value: unknown, label: string): Hex {
  if (value === undefined || value === null) return "0x";
  return bytesCheck.read(value, label).toLowerCase() as Hex;
}

export function optionalBoolean(value: unknown, label: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  return booleanCheck.read(value, label);
}
