// ERC-7677, the paymaster web service methods of viem's createPaymasterClient: params are
// [userOp, entryPoint, chainId (hex), context]. The EntryPoint picks the version: v0.6's operation shape, or v0.7's
// (also v0.8's) when it is a later EntryPoint the chain serves. The context is this service's SPONSORED mode object
// (sponsorshipInfo, expiryDuration); ERC20 mode is served by pm_sponsorUserOperation only, and for v0.6 only.

import type { EntryPointV07 } from "../actions/paymasterV07";
import { invalidParams } from "../errors";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import { laterEntryPoint, unsupportedEntryPoint } from "./entryPointChoice";
import type { MethodContext } from "./methodContext";
import { parseSponsoredContext, type SponsoredMode } from "./mode";
import { address, uint } from "./params";
import { parseUserOperation } from "./userOperationInput";
import { readUserOperationV07 } from "./userOperationV07Input";

export type Erc7677Request =
  | { version: "0.6"; userOp: PartialUserOperation; mode: SponsoredMode }
  | { version: "0.7" | "0.8"; target: EntryPointV07; userOp: PartialUserOperationV07; mode: SponsoredMode };

/** What ERC20 mode through these methods is answered with for now. */
const ERC20_REFUSAL = "the ERC-7677 methods serve SPONSORED mode; use pm_sponsorUserOperation for ERC20";
export const ERC20_V07_REFUSAL =
  "ERC20 mode is not yet supported for EntryPoint v0.7 and v0.8 operations (no token paymaster for them yet); " +
  "leave the mode out for SPONSORED mode, or use EntryPoint v0.6 for ERC20";

export function parseErc7677Params(params: unknown[], ctx: MethodContext): Erc7677Request {
  const target = laterEntryPoint(ctx.chain, params[1]);
  if (target) {
    const { userOp } = readUserOperationV07(params[0], target.version);
    checkChainId(params[2], ctx);
    refuseToken(params[3], "params[3]");
    const mode = parseSponsoredContext(params[3], "params[3]", ERC20_V07_REFUSAL);
    return { version: target.version, target, userOp, mode };
  }
  const userOp = parseUserOperation(params[0]);
  const entryPoint = address(params[1], "params[1]");
  if (entryPoint !== ctx.chain.entryPoint.toLowerCase()) throw unsupportedEntryPoint(ctx.chain, entryPoint);
  checkChainId(params[2], ctx);
  const mode = parseSponsoredContext(params[3], "params[3]", ERC20_REFUSAL);
  return { version: "0.6", userOp, mode };
}

function checkChainId(value: unknown, ctx: MethodContext): void {
  if (value === undefined || value === null) throw invalidParams("params[2] is required: the chain id");
  const chainId = uint(value, "params[2]");
  if (chainId !== BigInt(ctx.chain.chainId)) {
    throw invalidParams(`params[2]: chain ${chainId} is not this endpoint's chain ${ctx.chain.chainId}`);
  }
}

/**
 * Pimlico's ERC-7677 context names the fee token `token`, which means ERC20 mode: refused for v0.7/v0.8 rather than
 * silently sponsored.
 */
export function refuseToken(context: unknown, where: string): void {
  if (typeof context !== "object" || context === null) return;
  const token = (context as Record<string, unknown>).token;
  if (token !== undefined && token !== null) throw invalidParams(`${where}.token: ${ERC20_V07_REFUSAL}`);
}
