import type { Hex } from "viem";
import type { TokenInfo } from "../schemas/rpc/mode";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { SignableUserOperation } from "../sponsorship/sponsor";
import { feeToken, priceOf, signingWindow, tokenChain } from "../tokens/erc20Terms";
import { feeTerms } from "../tokens/quote";
import { signTokenPaymaster } from "../tokens/signTokenPaymaster";
import type { ActionContext } from "./context";
import { withTokenGas } from "./tokenGas";

export interface Erc20Request {
  userOp: PartialUserOperation;
  /** The account's signature as sent: read only to size an estimate. */
  signature: Hex;
  calculateGasLimits: boolean;
  expirySeconds: number;
  tokenInfo: TokenInfo;
}

export interface Erc20Sponsorship {
  paymasterAndData: Hex;
  userOp: SignableUserOperation;
  /** The service chose the fees (they were missing and calculateGasLimits was true): the signature covers them. */
  feesChosen: boolean;
}

/**
 * ERC20 mode (docs/erc20-mode.md): the token of `tokenInfo.feeTokenAddress`, its price now, the gas limits (estimated
 * with a 278-byte stub when calculateGasLimits is true), and the token paymaster's signature over all of it.
 */
export async function sponsorErc20(ctx: ActionContext, request: Erc20Request): Promise<Erc20Sponsorship> {
  const chain = tokenChain(ctx.chain);
  const token = feeToken(request.tokenInfo, chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const window = signingWindow(nowMs, request.expirySeconds);
  const terms = feeTerms(token, await priceOf(chain, token, nowMs), window);
  const { userOp, feesChosen } = await withTokenGas(
    request.userOp,
    request.signature,
    request.calculateGasLimits,
    ctx,
    chain,
    terms,
    "sign",
  );
  const paymasterAndData = await signTokenPaymaster(
    ctx.deps,
    { setup: ctx.setup, chain, token, terms, userOp },
    ctx.log,
  );
  return { paymasterAndData, userOp, feesChosen };
}
