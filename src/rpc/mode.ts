import type { Address } from "viem";
import { type Fields, object, optionalBoolean, address as readAddress } from "./params";
import { invalidParams } from "./rpcError";

/** How long a signed paymasterAndData stays valid unless the client asks otherwise, and the most it may ask. */
export const DEFAULT_EXPIRY_SECONDS = 300;
export const MAX_EXPIRY_SECONDS = 86_400;

export interface SponsoredMode {
  mode: "SPONSORED";
  calculateGasLimits: boolean;
  expirySeconds: number;
  webhookData?: Fields;
  smartAccount: { name: string; version: string };
  /** Set when the client named the EntryPoint (permissionless sends its address as params[1]). */
  entryPoint?: Address;
}

export interface Erc20Mode {
  mode: "ERC20";
  calculateGasLimits: boolean;
  expirySeconds: number;
  /** Read by src/rpc/erc20Mode.ts: feeTokenAddress (sponsoring), preferredToken and tokenList (quotes). */
  tokenInfo: Fields;
}

export type ModeRequest = SponsoredMode | Erc20Mode;

/** Biconomy's default account when the client does not say which it is. */
const DEFAULT_ACCOUNT = { name: "BICONOMY", version: "2.0.0" };

/**
 * Reads element 1 of the params: the mode object, or (permissionless) the EntryPoint address, which means a
 * sponsorship request without further information. `where` names the value in error messages (ERC-7677 methods carry
 * the same object as params[3], their context).
 */
export function parseMode(value: unknown, where = "params[1]"): ModeRequest {
  if (typeof value === "string") {
    return {
      mode: "SPONSORED",
      calculateGasLimits: false,
      expirySeconds: DEFAULT_EXPIRY_SECONDS,
      smartAccount: DEFAULT_ACCOUNT,
      entryPoint: readAddress(value, where),
    };
  }
  if (value === undefined || value === null) throw invalidParams(`${where} is required: the mode object`);
  const fields = object(value, where);
  const calculateGasLimits = optionalBoolean(fields.calculateGasLimits, `${where}.calculateGasLimits`) ?? false;
  const mode = fields.mode;
  if (mode === undefined || mode === null) throw invalidParams(`${where}.mode is required: SPONSORED or ERC20`);
  if (mode === "SPONSORED" || mode === "SPONSORSHIP") {
    return {
      mode: "SPONSORED",
      calculateGasLimits,
      expirySeconds: expiry(fields.expiryDuration, where),
      ...sponsorshipInfo(fields.sponsorshipInfo, where),
    };
  }
  if (mode === "ERC20") {
    return {
      mode: "ERC20",
      calculateGasLimits,
      expirySeconds: expiry(fields.expiryDuration, where),
      tokenInfo: object(fields.tokenInfo ?? {}, `${where}.tokenInfo`),
    };
  }
  throw invalidParams(`${where}.mode must be SPONSORED or ERC20, got ${JSON.stringify(mode).slice(0, 40)}`);
}

function expiry(value: unknown, where: string): number {
  if (value === undefined || value === null) return DEFAULT_EXPIRY_SECONDS;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_EXPIRY_SECONDS) {
    throw invalidParams(`${where}.expiryDuration must be a whole number of seconds from 1 to ${MAX_EXPIRY_SECONDS}`);
  }
  return value;
}

function sponsorshipInfo(value: unknown, where: string): Pick<SponsoredMode, "webhookData" | "smartAccount"> {
  if (value === undefined || value === null) return { smartAccount: DEFAULT_ACCOUNT };
  const info = object(value, `${where}.sponsorshipInfo`);
  const webhookData =
    info.webhookData === undefined || info.webhookData === null
      ? undefined
      : object(info.webhookData, `${where}.sponsorshipInfo.webhookData`);
  let smartAccount = DEFAULT_ACCOUNT;
  if (info.smartAccountInfo !== undefined && info.smartAccountInfo !== null) {
    const account = object(info.smartAccountInfo, `${where}.sponsorshipInfo.smartAccountInfo`);
    for (const field of ["name", "version"] as const) {
      if (typeof account[field] !== "string") {
        throw invalidParams(`${where}.sponsorshipInfo.smartAccountInfo.${field} must be a string`);
      }
    }
    smartAccount = { name: account.name as string, version: account.version as string };
  }
  return webhookData ? { webhookData, smartAccount } : { smartAccount };
}
