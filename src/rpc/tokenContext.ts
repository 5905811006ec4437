// ERC20 mode in a context object (ERC-7677's params[3], pimlico's pm_sponsorUserOperation params[2], and
// pm_getFeeQuoteOrData's params[2] for v0.7/v0.8): Pimlico's ERC-7677 context names the fee token `token`, and that
// alone selects ERC20 mode; `mode: "ERC20"` with tokenInfo.feeTokenAddress (the mode object's spelling) is read too.
import { invalidParams } from "../errors";
import type { TokenInfo } from "../schemas/rpc/mode";
import { parseContextMode } from "./mode";
import { limitTokenList } from "./tokenListLimit";

export interface TokenMode {
  mode: "ERC20";
  expirySeconds: number;
  /** The fee token as sent: checked to be an address, not yet to be one of the chain's tokens. */
  feeToken: string;
  /** Where the request names it (`params[3].token`), for the error that refuses it. */
  feeTokenLabel: string;
}

/** The ERC20 context: its token (required), and the signing window (expiryDuration) as in every mode. */
export function parseTokenContext(value: unknown, where: string): TokenMode {
  const { mode, context } = parseContextMode(value, where);
  const fromTokenInfo = mode.mode === "ERC20" ? mode.tokenInfo.feeTokenAddress : undefined;
  // An empty `token` is not passed over for tokenInfo's: the client meant to name one here.
  const chosen = context.token ?? fromTokenInfo;
  if (!chosen) {
    throw invalidParams(`${where}.token is required in ERC20 mode: the address of the fee token that pays for the gas`);
  }
  const feeTokenLabel = context.token ? `${where}.token` : `${where}.tokenInfo.feeTokenAddress`;
  return { mode: "ERC20", expirySeconds: mode.expirySeconds, feeToken: chosen, feeTokenLabel };
}

/**
 * pm_getFeeQuoteOrData's context for a v0.7/v0.8 operation: `token` or `preferredToken` (that token only), else
 * `tokenList`, else every token of the chain; the mode object's tokenInfo is read where these are absent.
 */
export function parseQuoteContext(value: unknown, where: string): { expirySeconds: number; selection: TokenInfo } {
  const { mode, context } = parseContextMode(value, where);
  const { expirySeconds } = mode;
  const single = context.token ?? context.preferredToken;
  if (single) return { expirySeconds, selection: { preferredToken: single } };
  if (context.tokenList === undefined || context.tokenList === null) {
    const tokenInfo = mode.mode === "ERC20" ? mode.tokenInfo : {};
    limitTokenList(tokenInfo.tokenList, `${where}.tokenInfo.tokenList`);
    return { expirySeconds, selection: tokenInfo };
  }
  limitTokenList(context.tokenList, `${where}.tokenList`);
  return { expirySeconds, selection: { tokenList: context.tokenList } };
}
