// ERC20 mode's quote (pm_getFeeQuoteOrData), nothing signed: per requested token, the most the token paymaster can
// charge for the operation under its EntryPoint version, over the gas the client sent or an estimate with that
// token's stub in.
import type { Address, Hex } from "viem";
import { ENTRY_POINT_VERSIONS } from "../bindings/entryPoints/versions";
import { maxTokenCost, tokenPaymasterGasLimits } from "../bindings/paymasters/token";
import type { TokenInfo } from "../schemas/rpc/mode";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import { requestedTokens, type TokenChain, termsNow, tokenChain } from "../tokens/erc20Terms";
import { feeQuote, quoteOfMaximum } from "../tokens/quote";
import { admitRequest } from "./admitRequest";
import type { ActionContext } from "./context";
import { asGivenV07, estimatedV07, hasGasV07 } from "./operationGasV07";
import { quoteEachToken } from "./quoteEachToken";
import type { EntryPointV07, VersionedOperation } from "./stepRequest";
import { tokenStubFieldsV07 } from "./stub";
import { withTokenGas } from "./tokenGas";

export type QuoteRequest = VersionedOperation & {
  expirySeconds: number;
  /** v0.6: estimate the gas first (later versions estimate whenever some gas is missing). */
  calculateGasLimits?: boolean;
  /** Which tokens: preferredToken (that one only), else tokenList, else every token of the chain. */
  selection: TokenInfo;
};

export interface Erc20Quote {
  /** The spender the client approves: the token paymaster. */
  paymasterAddress: Address;
  feeQuotes: FeeQuote[];
  /** Requested addresses this chain takes no fee in (or cannot price now), lowercase. */
  unsupportedTokens: string[];
}

/**
 * A quote per requested token. Tokens the chain does not take, or cannot quote now while others can (no usable price;
 * a simulation the token paymaster refuses), are listed in unsupportedTokens; when none can be quoted, the first one's
 * reason is the error.
 */
export async function quote(ctx: ActionContext, request: QuoteRequest): Promise<Erc20Quote> {
  await admitRequest(ctx, request.userOp.sender);
  const chain = tokenChain(ctx.chain);
  const { tokens, unsupported } = requestedTokens(request.selection, chain);
  const nowMs = ctx.deps.now();
  const feeQuotes = await quoteEachToken(ctx, tokens, unsupported, async (token) => {
    const terms = await termsNow(chain, token, nowMs, request.expirySeconds);
    const { maxTokenCost: _, ...quoted } =
      request.version === "0.6"
        ? feeQuote(token, terms, await gasV06(ctx, request, chain, terms))
        : quoteOfMaximum(token, terms, await maximumV07(ctx, request, terms));
    return quoted;
  });
  const paymasterAddress = request.version === "0.6" ? chain.tokenPaymaster : request.target.paymaster;
  return { paymasterAddress, feeQuotes, unsupportedTokens: unsupported };
}

type TermsOf = Awaited<ReturnType<typeof termsNow>>;

/** v0.6: with calculateGasLimits, a simulation with this token's stub in (tokenGas.ts). */
async function gasV06(
  ctx: ActionContext,
  request: QuoteRequest & { version: "0.6" },
  chain: TokenChain,
  terms: TermsOf,
) {
  const signature: Hex = request.signature ?? "0x";
  const { userOp } = await withTokenGas(
    request.userOp,
    signature,
    request.calculateGasLimits === true,
    ctx,
    chain,
    terms,
    "quote",
  );
  return userOp;
}

/** v0.7/v0.8: the version's prefund with the token paymaster's limits, over the gas sent or the bundler's estimate. */
async function maximumV07(
  ctx: ActionContext,
  request: { target: EntryPointV07; userOp: PartialUserOperationV07; signature?: Hex },
  terms: TermsOf,
): Promise<bigint> {
  const complete = hasGasV07(request.userOp)
    ? request.userOp
    : (await estimatedV07(ctx, request, tokenStubFieldsV07(request.target, request.userOp, terms))).userOp;
  return maxTokenCost(
    ENTRY_POINT_VERSIONS[request.target.version],
    asGivenV07(complete, tokenPaymasterGasLimits),
    terms,
  );
}
