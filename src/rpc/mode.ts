import type { Address } from "viem";
import { invalidParams } from "../errors";
import {
  DEFAULT_EXPIRY_SECONDS,
  MAX_EXPIRY_SECONDS,
  ModeObject,
  PaymasterContext,
  SponsoredContext,
  type TokenInfo,
} from "../schemas/rpc/mode";
import type { SmartAccountInfo } from "../sponsorship/callData";
import { type Fields, address as readAddress } from "./params";
import type { SponsorParams } from "./paramsForm";
import { schemaCheck } from "./schemaCheck";
import { limitTokenList } from "./tokenListLimit";

export { DEFAULT_EXPIRY_SECONDS, MAX_EXPIRY_SECONDS };

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
  /** Read by the ERC20 flow: feeTokenAddress (sponsoring), preferredToken and tokenList (quotes). */
  tokenInfo: TokenInfo;
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

const modeObjectCheck = schemaCheck<typeof ModeObject, ModeObject>(ModeObject);
const contextCheck = schemaCheck<typeof SponsoredContext, SponsoredContext>(SponsoredContext);
const paymasterContextCheck = schemaCheck<typeof PaymasterContext, PaymasterContext>(PaymasterContext);

/** The mode of params sorted by form (src/rpc/paramsForm.ts), read with the form's schema. */
export function parseModeParams(params: SponsorParams): ModeParams {
  if (params.form === "modeObject") return { form: "modeObject", mode: parseMode(params.modeObject) };
  return {
    form: "entryPoint",
    entryPoint: readAddress(params.entryPoint, "params[1]"),
    mode: parseSponsoredContext(
      params.context,
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
  if (value === undefined || value === null) return toMode({ mode: "SPONSORED" }) as SponsoredMode;
  const context = contextCheck.read(value, where);
  const mode = toMode({ ...context, mode: context.mode ?? "SPONSORED" });
  if (mode.mode !== "SPONSORED") throw invalidParams(`${where}.mode: ${erc20Refusal}`);
  return mode;
}

/**
 * A context object read with its schema, fee token fields included, for the flows that serve ERC20 too: its mode
 * (SPONSORED when absent) and the checked fields.
 */
export function parseContextMode(value: unknown, where: string): { mode: ModeRequest; context: PaymasterContext } {
  const context = value === undefined || value === null ? {} : paymasterContextCheck.read(value, where);
  return { mode: toMode({ ...context, mode: context.mode ?? "SPONSORED" }), context };
}

/** Reads the mode object (src/schemas/rpc/mode.ts); `where` names it in error messages. */
export function parseMode(value: unknown, where = "params[1]"): ModeRequest {
  const mode = toMode(modeObjectCheck.read(value ?? undefined, where));
  if (mode.mode === "ERC20") limitTokenList(mode.tokenInfo.tokenList, `${where}.tokenInfo.tokenList`);
  return mode;
}

/** The checked mode object as the flows use it: defaults filled in, null read as absent. */
function toMode(fields: ModeObject): ModeRequest {
  const calculateGasLimits = fields.calculateGasLimits ?? false;
  const expirySeconds = fields.expiryDuration ?? DEFAULT_EXPIRY_SECONDS;
  if (fields.mode === "ERC20") {
    return { mode: "ERC20", calculateGasLimits, expirySeconds, tokenInfo: fields.tokenInfo ?? {} };
  }
  const info = fields.sponsorshipInfo;
  const account = info?.smartAccountInfo;
  return {
    mode: "SPONSORED",
    calculateGasLimits,
    expirySeconds,
    ...(info?.webhookData ? { webhookData: info.webhookData } : {}),
    ...(account ? { smartAccount: { name: account.name, version: account.version } } : {}),
  };
}
