import type { Address } from "viem";
import type { SmartAccountInfo } from "../sponsorship/callData";
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
  /** The account the client named; when none, the callData's selector says which layout it has. */
  smartAccount?: SmartAccountInfo;
}

export interface Erc20Mode {
  mode: "ERC20";
  calculateGasLimits: boolean;
  expirySeconds: number;
  /** Read by src/rpc/erc20Mode.ts: feeTokenAddress (sponsoring), preferredToken and tokenList (quotes). */
  tokenInfo: Fields;
}

export type ModeRequest = SponsoredMode | Erc20Mode;

/**
 * What follows the operation in pm_sponsorUserOperation's params (and pm_getFeeQuoteOrData's), in one of two forms:
 * - `[userOp, modeObject]` (Biconomy's SDK): a refusal is a result, `paymasterAndData: "0x"` with the reason;
 * - `[userOp, entryPoint, context?]` (permissionless): the context has the mode object's fields and serves SPONSORED
 *   mode; a refusal is a -32003 error, since permissionless reads no `0x` result and would send the operation unpaid.
 */
export type ModeParams =
  | { form: "modeObject"; mode: ModeRequest }
  | { form: "entryPoint"; mode: SponsoredMode; entryPoint: Address };

export function parseModeParams(params: unknown[]): ModeParams {
  if (typeof params[1] !== "string") return { form: "modeObject", mode: parseMode(params[1]) };
  return {
    form: "entryPoint",
    entryPoint: readAddress(params[1], "params[1]"),
    mode: parseSponsoredContext(
      params[2],
      "params[2]",
      "a context after the EntryPoint address serves SPONSORED mode; for ERC20 send the mode object as params[1]",
    ),
  };
}

/**
 * A context object (permissionless's params[2], ERC-7677's params[3]): optional, with the mode object's fields, and
 * mode SPONSORED unless it says otherwise. Only SPONSORED mode is served this way; `erc20Refusal` says where ERC20 is.
 */
export function parseSponsoredContext(value: unknown, where: string, erc20Refusal: string): SponsoredMode {
  const context = value === undefined || value === null ? {} : object(value, where);
  const mode = parseMode({ ...context, mode: context.mode ?? "SPONSORED" }, where);
  if (mode.mode !== "SPONSORED") throw invalidParams(`${where}.mode: ${erc20Refusal}`);
  return mode;
}

/** Reads the mode object; `where` names it in error messages. */
export function parseMode(value: unknown, where = "params[1]"): ModeRequest {
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
  if (value === undefined || value === null) return {};
  const info = object(value, `${where}.sponsorshipInfo`);
  const webhookData =
    info.webhookData === undefined || info.webhookData === null
      ? undefined
      : object(info.webhookData, `${where}.sponsorshipInfo.webhookData`);
  let smartAccount: SmartAccountInfo | undefined;
  if (info.smartAccountInfo !== undefined && info.smartAccountInfo !== null) {
    const account = object(info.smartAccountInfo, `${where}.sponsorshipInfo.smartAccountInfo`);
    for (const field of ["name", "version"] as const) {
      if (typeof account[field] !== "string") {
        throw invalidParams(`${where}.sponsorshipInfo.smartAccountInfo.${field} must be a string`);
      }
    }
    smartAccount = { name: account.name as string, version: account.version as string };
  }
  return { ...(webhookData ? { webhookData } : {}), ...(smartAccount ? { smartAccount } : {}) };
}
