import type { Hex } from "viem";
import type { TokenInfo } from "../schemas/rpc/mode";
import { paymasterAndDataV06, type SignableUserOperation } from "../sponsorship/entryPoints/v06";
import { ENTRY_POINT_VERSIONS } from "../sponsorship/entryPoints/versions";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import { tokenPaymaster } from "../sponsorship/paymasters/token";
import { feeToken, termsNow, tokenChain } from "../tokens/erc20Terms";
import type { ActionContext } from "./context";
import { signedOrThrow, signOperation } from "./signOperation";
import { withTokenGas } from "./tokenGas";

export interface Erc20Request {
  userOp: PartialUserOperation;
  /** The account's signature as sent: read only to size an estimate. */
  signature: Hex;
  calculateGasLimits: boolean;
  expirySeconds: number;
  tokenInfo: TokenInfo;
  /** Where the request names the fee token, for the error that refuses it. */
  feeTokenLabel: string;
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
  const token = feeToken(request.tokenInfo.feeTokenAddress, chain, request.feeTokenLabel);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const terms = await termsNow(chain, token, nowMs, request.expirySeconds);
  const { userOp, feesChosen } = await withTokenGas(
    request.userOp,
    request.signature,
    request.calculateGasLimits,
    ctx,
    chain,
    terms,
    "sign",
  );
  // The sender must hold the operation's maximum charge; then the token paymaster signs the terms, on record.
  const signed = signedOrThrow(
    await signOperation(ctx, {
      version: ENTRY_POINT_VERSIONS["0.6"],
      entryPoint: chain.entryPoint,
      kind: tokenPaymaster({ chain, token, terms, log: ctx.log }),
      paymaster: chain.tokenPaymaster,
      userOp,
      expirySeconds: request.expirySeconds,
    }),
  );
  return { paymasterAndData: paymasterAndDataV06(signed), userOp, feesChosen };
}
