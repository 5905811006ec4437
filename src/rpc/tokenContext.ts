// ERC20 mode in a context object (ERC-7677's params[3], pimlico's pm_sponsorUserOperation params[2], and
// pm_getFeeQuoteOrData's params[2] for v0.7/v0.8): Pimlico's ERC-7677 context names the fee token `token`, and that
// alone selects ERC20 mode; `mode: "ERC20"` with tokenInfo.feeTokenAddress (the mode object's spelling) is read too.
import { type Hex, maxUint256 } from "viem";
import type { ContextPermit } from "../actions/kinds/permitTokenKind";
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
  /** An EIP-2612 permit for the up-front token paymaster (v0.7 on), and where the request names it. */
  permit?: ContextPermit;
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
  const permit = parsePermit(context.permit, `${where}.permit`);
  return {
    mode: "ERC20",
    expirySeconds: mode.expirySeconds,
    feeToken: chosen,
    feeTokenLabel,
    ...(permit ? { permit } : {}),
  };
}

const UINT = /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/;

function uint256(value: unknown, label: string): bigint {
  const parsed = typeof value === "string" && UINT.test(value) ? BigInt(value) : undefined;
  if (parsed === undefined || parsed > maxUint256) {
    throw invalidParams(`${label} must be a uint256, as 0x-prefixed hex or a decimal string`);
  }
  return parsed;
}

/**
 * `permit`: absent or null for none. Its shape was checked by the context's schema (src/schemas/rpc/mode.ts), with
 * these same words; the checks stay here for the range of a uint256 and the deadline. The deadline must be the maximum, the only one the up-front token paymaster runs
 * a permit with (a USDC-style token then never reads the clock in validation); the signature is the owner's, any
 * length (65 bytes from an EOA, an ERC-1271 account's own, an ERC-6492 wrapper for one not deployed yet).
 */
function parsePermit(value: unknown, label: string): ContextPermit | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    throw invalidParams(`${label} must be an object { value, deadline, signature }`);
  }
  const fields = value as Record<string, unknown>;
  const amount = uint256(fields.value, `${label}.value`);
  const deadline = uint256(fields.deadline, `${label}.deadline`);
  if (deadline !== maxUint256) {
    throw invalidParams(
      `${label}.deadline must be the maximum uint256 (${maxUint256}): the only deadline the up-front token ` +
        "paymaster runs a permit with, since a token reading the clock breaks validation's rules",
    );
  }
  const signature = fields.signature;
  if (typeof signature !== "string" || !/^0x([0-9a-fA-F]{2})+$/.test(signature)) {
    throw invalidParams(`${label}.signature must be the owner's signature as non-empty 0x-prefixed hex bytes`);
  }
  return { value: amount, signature: signature.toLowerCase() as Hex, label };
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
