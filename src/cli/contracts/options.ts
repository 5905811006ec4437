// The contracts command's options, each checked once with a message naming the option and what it expects, so that a
// mistake is refused before anything is read from or sent to a chain.
import { type Address, getAddress, isAddress, parseEther } from "viem";
import type { KnownEntryPointVersion } from "../../bindings/entryPoints/versions";
import {
  OUR_ENTRY_POINT_VERSIONS,
  OUR_PAYMASTER_KINDS,
  type OurPaymasterKind,
} from "../../bindings/paymasters/ourPaymasters";

/** A mistake in how the command was called: exit code 2, the message and the usage. */
export class UsageError extends Error {}

/** A refusal or a failure on the chain: exit code 1, the message says what to do. */
export class CommandError extends Error {}

export interface RawOptions {
  "rpc-url"?: string;
  "key-file"?: string;
  owner?: string;
  "entry-points"?: string;
  kinds?: string;
  amount?: string;
  "unstake-delay"?: string;
  to?: string;
  signer?: string;
  json?: boolean;
  "dry-run"?: boolean;
}

export const OPTION_TYPES = {
  "rpc-url": { type: "string" },
  "key-file": { type: "string" },
  owner: { type: "string" },
  "entry-points": { type: "string" },
  kinds: { type: "string" },
  amount: { type: "string" },
  "unstake-delay": { type: "string" },
  to: { type: "string" },
  signer: { type: "string" },
  json: { type: "boolean" },
  "dry-run": { type: "boolean" },
} as const;

export function required(raw: RawOptions, name: keyof RawOptions): string {
  const value = raw[name];
  if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required`);
  return value.trim();
}

export function rpcUrl(raw: RawOptions): string {
  const value = required(raw, "rpc-url");
  let protocol: string;
  try {
    protocol = new URL(value).protocol;
  } catch {
    throw new UsageError(`--rpc-url must be an http(s) URL, got "${value}"`);
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new UsageError(`--rpc-url must be an http(s) URL, got "${value}"`);
  }
  return value;
}

export function address(raw: RawOptions, name: "owner" | "to" | "signer"): Address {
  const value = required(raw, name);
  if (!isAddress(value, { strict: false })) throw new UsageError(`--${name} must be an address (0x and 40 hex digits)`);
  return getAddress(value);
}

export function optionalAddress(raw: RawOptions, name: "owner"): Address | undefined {
  return raw[name] === undefined ? undefined : address(raw, name);
}

/** `--entry-points 0.6,0.7`: every version by default. */
export function entryPointVersions(raw: RawOptions): KnownEntryPointVersion[] {
  return list(raw, "entry-points", OUR_ENTRY_POINT_VERSIONS, [...OUR_ENTRY_POINT_VERSIONS]);
}

/** `--kinds verifying,token`: `fallback` when not given. */
export function kinds(raw: RawOptions, fallback: readonly OurPaymasterKind[]): OurPaymasterKind[] {
  return list(raw, "kinds", OUR_PAYMASTER_KINDS, [...fallback]);
}

function list<T extends string>(raw: RawOptions, name: "entry-points" | "kinds", allowed: readonly T[], fallback: T[]) {
  const value = raw[name];
  if (value === undefined) return fallback;
  const items = value.split(",").map((item) => item.trim());
  const unknown = items.filter((item) => !allowed.includes(item as T));
  if (items.length === 0 || unknown.length > 0 || items.includes("")) {
    throw new UsageError(`--${name} must be a comma-separated list of ${allowed.join(", ")}, got "${value}"`);
  }
  return [...new Set(items)] as T[];
}

/** An amount of the native token in ether units ("1", "0.5"). */
export function amount(raw: RawOptions): bigint {
  const value = required(raw, "amount");
  if (!/^\d+(\.\d{1,18})?$/.test(value)) {
    throw new UsageError(`--amount must be a positive number of ether (up to 18 decimals), got "${value}"`);
  }
  const wei = parseEther(value);
  if (wei === 0n) throw new UsageError("--amount must be more than 0");
  return wei;
}

/** Seconds; the EntryPoint keeps it in a uint32. */
export function unstakeDelay(raw: RawOptions): number {
  const value = required(raw, "unstake-delay");
  const seconds = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= 1 && seconds <= 0xffffffff)) {
    throw new UsageError(`--unstake-delay must be a whole number of seconds from 1 to 4294967295, got "${value}"`);
  }
  return seconds;
}
