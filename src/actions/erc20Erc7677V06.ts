// ERC20 mode through ERC-7677 for EntryPoint v0.6 operations (docs/erc20-mode.md, 'ERC-7677 with a fee token'): the
// context's `token` picks the fee token, the stub is the token paymaster's 278-byte paymasterAndData with today's terms
// and a signature that recovers to nobody, and the final answer is sponsorErc20's signature over the gas values the
// wallet's bundler estimated, with the same checks and record as pm_sponsorUserOperation in mode ERC20.
import type { Hex } from "viem";
import { invalidParams } from "../errors";
import { stubTokenPaymasterAndData } from "../gasEstimation/gasEstimationStub";
import { cheapestCompletion } from "../sponsorship/eligibility";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import { maxTokenCost } from "../sponsorship/paymasters/tokenPaymasterAndData";
import { feeToken, requireBalance, termsNow, tokenChain } from "../tokens/erc20Terms";
import type { ActionContext } from "./context";
import { sponsorErc20 } from "./sponsorErc20";
import { TOKEN_POSTOP_MIN_VERIFICATION_GAS } from "./tokenGas";

export interface TokenModeV06 {
  expirySeconds: number;
  /** The fee token's address as the client sent it, and where. */
  feeToken: string;
  feeTokenLabel: string;
}

/**
 * The token paymaster's stub, once the sender is found to hold enough of the token for the operation at its cheapest
 * (gas not estimated yet counts as zero): one that cannot pay even that is refused in the final request's words.
 */
export async function tokenStubV06(ctx: ActionContext, userOp: PartialUserOperation, mode: TokenModeV06): Promise<Hex> {
  const chain = tokenChain(ctx.chain);
  const token = feeToken(mode.feeToken, chain, mode.feeTokenLabel);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const terms = await termsNow(chain, token, nowMs, mode.expirySeconds);
  const least = maxTokenCost(cheapestCompletion(userOp), terms.exchangeRate, terms.priceMarkup);
  await requireBalance(chain, token, userOp.sender, least, ctx.log);
  return stubTokenPaymasterAndData({ ...terms, paymaster: chain.tokenPaymaster });
}

/**
 * Signed over the gas values as sent. EntryPoint v0.6 gives postOp the operation's verificationGasLimit, and a bundler
 * estimating over our stub does not know postOp's need, so a limit below what the token charge needs is refused rather
 * than signed for an operation whose charge would fail.
 */
export async function tokenPaymasterAndDataV06(
  ctx: ActionContext,
  userOp: PartialUserOperation,
  mode: TokenModeV06,
): Promise<Hex> {
  const limit = userOp.verificationGasLimit;
  if (limit !== undefined && limit < TOKEN_POSTOP_MIN_VERIFICATION_GAS) {
    throw invalidParams(
      `params[0].verificationGasLimit ${limit} is below ${TOKEN_POSTOP_MIN_VERIFICATION_GAS}: EntryPoint v0.6 gives ` +
        "the token paymaster's postOp this limit, and its token charge needs at least that",
    );
  }
  const signed = await sponsorErc20(ctx, {
    userOp,
    signature: "0x",
    calculateGasLimits: false,
    expirySeconds: mode.expirySeconds,
    tokenInfo: { feeTokenAddress: mode.feeToken },
    feeTokenLabel: mode.feeTokenLabel,
  });
  return signed.paymasterAndData;
}
