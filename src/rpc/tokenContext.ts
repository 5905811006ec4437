// ERC20 mode in a context object (ERC-7677's params[3], pimlico's pm_sponsorUserOperation params[2], and
// pm_getFeeQuoteOrData's params[2] for v0.7/v0.8): Pimlico's ERC-7677 context names the fee token `token`, and that
// alone selects ERC20 mode; `mode: "ERC20"` with tokenInfo.feeTokenAddress (the mode object's spelling) is read too.
import { isAddress } from "viem";
import { invalidParams } from "../errors";
import { MAX_TOKEN_LIST, type TokenInfo } from "../schemas/rpc/mode";
import { parseContextMode } from "./mode";

export interface TokenMode {
  mode: "ERC20";
  expirySeconds: number;
  /** The fee token as sent: checked to be an address, not yet to be one of the chain's tokens. */
  feeToken: string;
  /** Where the request names it (`params[3].token`), for the error that refuses it. */
  feeTokenLabel: string;
}

const TOKEN_ADDRESS = "must be a token address (0x followed by 40 hex digits)";

function member(context: unknown, name: string): unknown {
  if (typeof context !== "object" || context === null || Array.isArray(context)) return undefined;
  return (context as Record<string, unknown>)[name];
}

/** The ERC20 context: its token (required), and the signing window (expiryDuration) as in every mode. */
export function parseTokenContext(context: unknown, where: string): TokenMode {
  const mode = parseContextMode(context, where);
  const token = member(context, "token");
  const fromTokenInfo = mode.mode === "ERC20" ? mode.tokenInfo.feeTokenAddress : undefined;
  const chosen = token ?? fromTokenInfo;
  const label = token !== undefined && token !== null ? `${where}.token` : `${where}.tokenInfo.feeTokenAddress`;
  if (chosen === undefined || chosen === null || chosen === "") {
    throw invalidParams(`${where}.token is required in ERC20 mode: the address of the fee token that pays for the gas`);
  }
  if (typeof chosen !== "string" || !isAddress(chosen, { strict: false })) {
    throw invalidParams(`${label} ${TOKEN_ADDRESS}, got ${JSON.stringify(chosen)}`);
  }
  return { mode: "ERC20", expirySeconds: mode.expirySeconds, feeToken: chosen, feeTokenLabel: label };
}

/**
 * pm_getFeeQuoteOrData's context for a v0.7/v0.8 operation: `token` or `preferredToken` (that token only), else
 * `tokenList`, else every token of the chain; the mode object's tokenInfo is read where these are absent.
 */
export function parseQuoteContext(context: unknown, where: string): { expirySeconds: number; selection: TokenInfo } {
  const mode = parseContextMode(context, where);
  const tokenInfo = mode.mode === "ERC20" ? mode.tokenInfo : {};
  const single = member(context, "token") ?? member(context, "preferredToken");
  if (single !== undefined && single !== null && single !== "") {
    if (typeof single !== "string" || !isAddress(single, { strict: false })) {
      const name = member(context, "token") !== undefined ? "token" : "preferredToken";
      throw invalidParams(`${where}.${name} ${TOKEN_ADDRESS}, got ${JSON.stringify(single)}`);
    }
    return { expirySeconds: mode.expirySeconds, selection: { preferredToken: single } };
  }
  const list = member(context, "tokenList");
  if (list === undefined || list === null) {
    limitTokenList(tokenInfo.tokenList, `${where}.tokenInfo.tokenList`);
    return { expirySeconds: mode.expirySeconds, selection: tokenInfo };
  }
  if (!Array.isArray(list)) throw invalidParams(`${where}.tokenList must be an array of token addresses`);
  limitTokenList(list, `${where}.tokenList`);
  for (const [index, value] of list.entries()) {
    if (typeof value !== "string" || !isAddress(value, { strict: false })) {
      throw invalidParams(`${where}.tokenList[${index}] ${TOKEN_ADDRESS}, got ${JSON.stringify(value)}`);
    }
  }
  return { expirySeconds: mode.expirySeconds, selection: { tokenList: list as string[] } };
}

/** A quote's tokenList names at most MAX_TOKEN_LIST tokens: more is a malformed request, not a bigger quote. */
export function limitTokenList(list: readonly unknown[] | null | undefined, label: string): void {
  if (list && list.length > MAX_TOKEN_LIST) throw invalidParams(`${label} may name at most ${MAX_TOKEN_LIST} tokens`);
}
