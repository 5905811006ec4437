// ERC-7677, the paymaster web service methods of viem's createPaymasterClient: params are
// [userOp, entryPoint, chainId (hex), context]. The context is this service's SPONSORED mode object
// (sponsorshipInfo, expiryDuration); ERC20 mode is served by pm_sponsorUserOperation only.

import { invalidParams } from "../errors";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { MethodContext } from "./methodContext";
import { parseSponsoredContext, type SponsoredMode } from "./mode";
import { address, uint } from "./params";
import { parseUserOperation } from "./userOperationInput";

export interface Erc7677Request {
  userOp: PartialUserOperation;
  mode: SponsoredMode;
}

export function parseErc7677Params(params: unknown[], ctx: MethodContext): Erc7677Request {
  const userOp = parseUserOperation(params[0]);
  const entryPoint = address(params[1], "params[1]");
  if (entryPoint !== ctx.chain.entryPoint.toLowerCase()) {
    throw invalidParams(`params[1]: EntryPoint ${entryPoint} is not supported; use ${ctx.chain.entryPoint}`);
  }
  if (params[2] === undefined || params[2] === null) throw invalidParams("params[2] is required: the chain id");
  const chainId = uint(params[2], "params[2]");
  if (chainId !== BigInt(ctx.chain.chainId)) {
    throw invalidParams(`params[2]: chain ${chainId} is not this endpoint's chain ${ctx.chain.chainId}`);
  }
  const mode = parseSponsoredContext(
    params[3],
    "params[3]",
    "the ERC-7677 methods serve SPONSORED mode; use pm_sponsorUserOperation for ERC20",
  );
  return { userOp, mode };
}
