// ERC20 mode (docs/erc20-mode.md): the user operation's gas is paid by the chain's token paymaster out of its own
// EntryPoint deposit, and the sender pays it back in a fee token. The service quotes (pm_getFeeQuoteOrData) and signs
// the 278-byte paymasterAndData (pm_sponsorUserOperation). None of SPONSORED mode's rules apply: no funding wallet,
// policy, spending limit or webhook is consulted, since the user pays; the dApp's apiKey only names the chain.
import { type Address, erc20Abi, formatUnits, type Hex, toHex, zeroAddress } from "viem";
import { chainClient } from "../chain/chainClient";
import { EstimationUnavailableError, OperationRevertedError } from "../chain/gasEstimationErrors";
import { stubTokenPaymasterAndData } from "../chain/gasEstimationStub";
import type { SponsoringChain } from "../chain/sponsoringChains";
import {
  encodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  maxTokenCost,
  type TokenFeeTerms,
} from "../chain/tokenPaymasterAndData";
import { getUserOpHash } from "../chain/userOpHash";
import type { TokenConfig } from "../config";
import { MAX_TOKEN_LIST, type TokenInfo } from "../schemas/rpc/mode";
import type { Erc20QuoteResult, FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import type { Erc20SponsorResult } from "../schemas/rpc/pm_sponsorUserOperation";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../sponsorship/partialUserOperation";
import { CLOCK_SKEW_SECONDS, type SignableUserOperation } from "../sponsorship/sponsor";
import { allowanceOverride, approvesSpender, QUOTED_APPROVE_GAS } from "../tokens/allowanceOverride";
import { PriceReadError, PriceUnavailableError, readTokenPrice, type TokenPrice, tokenName } from "../tokens/price";
import { feeQuote, feeTerms } from "../tokens/quote";
import type { MethodContext } from "./methodContext";
import type { Erc20Mode } from "./mode";
import { observedGasEstimate } from "./observedGasEstimation";
import { ESTIMATION_UNAVAILABLE } from "./pm_sponsorUserOperation";
import { invalidParams, RpcError } from "./rpcError";

/**
 * The least verificationGasLimit an ERC20-mode operation is signed with: EntryPoint v0.6 gives postOp that much gas,
 * and the token paymaster's postOp (a transferFrom, its event, and the retry after a reverted call) measured up to
 * 38,247 gas on anvil (contracts/TokenPaymaster.sol, POST_OP_OVERHEAD_GAS), plus the 10,000 it keeps back from the
 * token call. An estimate below this (a deployed account with a cheap validation) is raised to it.
 */
export const TOKEN_POSTOP_MIN_VERIFICATION_GAS = 60_000n;

type TokenChain = SponsoringChain & { tokenPaymaster: Address; tokens: readonly TokenConfig[] };

/**
 * pm_sponsorUserOperation in mode ERC20: the token of `tokenInfo.feeTokenAddress`, its price now, the gas limits
 * (estimated with a 278-byte stub when calculateGasLimits is true), and the token paymaster's signature over all of it.
 */
export async function sponsorErc20(
  userOp: PartialUserOperation,
  accountSignature: Hex,
  mode: Erc20Mode,
  ctx: MethodContext,
): Promise<Erc20SponsorResult> {
  const chain = tokenChain(ctx.chain);
  const token = feeToken(mode.tokenInfo, chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const terms = feeTerms(token, await priceOf(chain, token, nowMs), signingWindow(nowMs, mode));
  const { userOp: signable, feesChosen } = await withGas(userOp, accountSignature, mode, ctx, chain, terms, "sign");

  const maximum = maxTokenCost(signable, terms.exchangeRate, terms.priceMarkup);
  await requireBalance(chain, token, signable.sender, maximum, ctx);

  const paymaster = chain.tokenPaymaster;
  const hash = getTokenPaymasterHash(signable, { ...terms, chainId: chain.chainId, paymaster });
  const paymasterAndData = encodeTokenPaymasterAndData({
    ...terms,
    paymaster,
    signature: await ctx.deps.signer.signHash(hash),
  });
  // Every signature the service gives out is on record (the user pays, so no deposit is held against it).
  await ctx.deps.log.record({
    paymasterId: ctx.setup.paymasterId,
    chainId: chain.chainId,
    sender: signable.sender,
    nonce: signable.nonce,
    sponsored: true,
    userOpHash: getUserOpHash({ ...signable, paymasterAndData }, chain.entryPoint, chain.chainId),
    callGasLimit: signable.callGasLimit,
    verificationGasLimit: signable.verificationGasLimit,
    preVerificationGas: signable.preVerificationGas,
    maxFeePerGas: signable.maxFeePerGas,
    maxPriorityFeePerGas: signable.maxPriorityFeePerGas,
    validUntil: terms.validUntil,
    validAfter: terms.validAfter,
    paymasterAddress: paymaster,
    ruleOutcomes: [
      {
        rule: "ERC20",
        passed: true,
        feeToken: token.address,
        symbol: token.symbol,
        priceSource: terms.priceSource,
        exchangeRate: terms.exchangeRate.toString(),
        priceMarkup: terms.priceMarkup,
        maxTokenCost: maximum.toString(),
      },
    ],
  });
  return {
    mode: "ERC20",
    MODE: "ERC20",
    paymasterAndData,
    preVerificationGas: signable.preVerificationGas.toString(),
    verificationGasLimit: Number(signable.verificationGasLimit),
    callGasLimit: Number(signable.callGasLimit),
    ...(feesChosen
      ? { maxFeePerGas: toHex(signable.maxFeePerGas), maxPriorityFeePerGas: toHex(signable.maxPriorityFeePerGas) }
      : {}),
  };
}

/**
 * pm_getFeeQuoteOrData in mode ERC20: a quote per token of `tokenInfo.preferredToken` (that one only), else of
 * `tokenInfo.tokenList`, else of every token the chain supports. Requested tokens the chain does not support, or cannot
 * quote now while others can (no usable price; a simulation the token paymaster refuses), are listed in
 * unsupportedTokens; when no token can be quoted, the first one's reason is the error.
 */
export async function quoteErc20(
  userOp: PartialUserOperation,
  accountSignature: Hex,
  mode: Erc20Mode,
  ctx: MethodContext,
): Promise<Erc20QuoteResult> {
  const chain = tokenChain(ctx.chain);
  const { tokens, unsupported } = requestedTokens(mode.tokenInfo, chain);
  const nowMs = (ctx.deps.now ?? Date.now)();
  const window = signingWindow(nowMs, mode);
  // Each token on its own: its price, and (calculateGasLimits) a simulation with its stub, which the contract refuses
  // when the sender holds none of it.
  const outcomes = await Promise.all(
    tokens.map(async (token): Promise<{ quote: FeeQuote } | { token: TokenConfig; error: unknown }> => {
      try {
        const terms = feeTerms(token, await priceOf(chain, token, nowMs), window);
        const { userOp: gas } = await withGas(userOp, accountSignature, mode, ctx, chain, terms, "quote");
        const { maxTokenCost: _, ...quote } = feeQuote(token, terms, gas);
        return { quote };
      } catch (error) {
        return { token, error };
      }
    }),
  );
  const feeQuotes = outcomes.flatMap((outcome) => ("quote" in outcome ? [outcome.quote] : []));
  const failed = outcomes.flatMap((outcome) => ("error" in outcome ? [outcome] : []));
  if (feeQuotes.length === 0 && failed[0]) throw failed[0].error;
  for (const { token, error } of failed) {
    ctx.log.warn(
      { chainId: chain.chainId, token: token.address, reason: (error as Error).message },
      "token not quoted",
    );
    unsupported.push(token.address);
  }
  return {
    mode: "ERC20",
    MODE: "ERC20",
    paymasterAddress: chain.tokenPaymaster,
    feeQuotes,
    unsupportedTokens: unsupported,
  };
}

/**
 * Validation refuses an operation whose sender holds less than its maximum charge; saying so now is clearer than the
 * bundler's AA33 later. Where the chain has no RPC, or the read fails, the contract's own check is left to refuse.
 */
async function requireBalance(
  chain: TokenChain,
  token: TokenConfig,
  sender: Address,
  maximum: bigint,
  ctx: MethodContext,
): Promise<void> {
  const client = chainClient(chain);
  if (!client) return;
  let balance: bigint;
  try {
    balance = await client.readContract({
      address: token.address as Address,
      abi: erc20Abi,
      functionName: "balanceOf",
      args: [sender],
    });
  } catch (error) {
    ctx.log.warn({ chainId: chain.chainId, token: token.address, err: error }, "fee token balance not read");
    return;
  }
  if (balance < maximum) {
    const amount = (value: bigint) => `${formatUnits(value, token.decimals)} ${token.symbol}`;
    throw invalidParams(
      `Sender ${sender} holds ${amount(balance)} of fee token ${tokenName(token)}, less than the ${amount(maximum)} ` +
        "this operation can be charged at most: the token paymaster would refuse it",
    );
  }
}

function tokenChain(chain: SponsoringChain): TokenChain {
  if (!chain.tokenPaymaster || !chain.tokens || chain.tokens.length === 0) {
    throw invalidParams(
      `mode ERC20 is not available on chain ${chain.chainId} (${chain.name}): no token paymaster is configured`,
    );
  }
  return chain as TokenChain;
}

function accepted(chain: TokenChain): string {
  return `chain ${chain.chainId} accepts ${chain.tokens.map(tokenName).join(", ")}`;
}

/**
 * tokenInfo.feeTokenAddress: required, not the zero address, and one of the chain's tokens. Its shape (an address, or
 * empty) was checked with the mode object (src/schemas/rpc/mode.ts).
 */
function feeToken(tokenInfo: TokenInfo, chain: TokenChain): TokenConfig {
  const label = "params[1].tokenInfo.feeTokenAddress";
  const value = tokenInfo.feeTokenAddress;
  if (value === undefined || value === null || value === "") {
    throw invalidParams(`${label} is required in mode ERC20: the token that pays for the gas (${accepted(chain)})`);
  }
  const address = value.toLowerCase();
  if (address === zeroAddress) {
    throw invalidParams(`${label} is the zero address, which is no fee token (${accepted(chain)})`);
  }
  const token = chain.tokens.find((candidate) => candidate.address === address);
  if (!token) throw invalidParams(`Fee token ${address} is not supported (${accepted(chain)})`);
  return token;
}

/** The quote's selection: preferredToken, else tokenList, else all; empty strings count as absent (SDKs send them). */
function requestedTokens(tokenInfo: TokenInfo, chain: TokenChain): { tokens: TokenConfig[]; unsupported: string[] } {
  let requested: string[] | undefined;
  const { preferredToken, tokenList } = tokenInfo;
  if (preferredToken !== undefined && preferredToken !== null && preferredToken !== "") {
    requested = [preferredToken.toLowerCase()];
  } else if (tokenList !== undefined && tokenList !== null) {
    if (tokenList.length > MAX_TOKEN_LIST) {
      throw invalidParams(`params[1].tokenInfo.tokenList may name at most ${MAX_TOKEN_LIST} tokens`);
    }
    const named = tokenList.flatMap((value) => (value === "" || value === null ? [] : [value.toLowerCase()]));
    if (named.length > 0) requested = [...new Set(named)];
  }
  if (!requested) return { tokens: [...chain.tokens], unsupported: [] };
  const tokens: TokenConfig[] = [];
  const unsupported: string[] = [];
  for (const address of requested) {
    const token = chain.tokens.find((candidate) => candidate.address === address);
    if (token) tokens.push(token);
    else unsupported.push(address);
  }
  return { tokens, unsupported };
}

function signingWindow(nowMs: number, mode: Erc20Mode): { validUntil: number; validAfter: number } {
  const nowSeconds = Math.floor(nowMs / 1000);
  return { validUntil: nowSeconds + mode.expirySeconds, validAfter: nowSeconds - CLOCK_SKEW_SECONDS };
}

/** A price that cannot be used is a refusal (-32602, HTTP 400); a node that cannot be asked is transient (503). */
async function priceOf(chain: TokenChain, token: TokenConfig, nowMs: number): Promise<TokenPrice> {
  try {
    return await readTokenPrice(chain, token, nowMs);
  } catch (error) {
    if (error instanceof PriceUnavailableError) throw invalidParams(error.message);
    if (error instanceof PriceReadError) throw new RpcError(ESTIMATION_UNAVAILABLE, error.message, 503);
    throw error;
  }
}

/**
 * The gas values to sign or to quote: as sent when calculateGasLimits is false (all must be there), else estimated
 * as in SPONSORED mode, with the token paymaster's 278-byte stub carrying the terms that will be signed. A quote's
 * operation that does not approve the token paymaster yet is estimated with the allowance already given, and quoted
 * with the approve's gas (allowanceOverride.ts).
 */
async function withGas(
  userOp: PartialUserOperation,
  accountSignature: Hex,
  mode: Erc20Mode,
  ctx: MethodContext,
  chain: TokenChain,
  terms: TokenFeeTerms,
  purpose: "sign" | "quote",
): Promise<{ userOp: SignableUserOperation; feesChosen: boolean }> {
  const missing = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].filter((field) => userOp[field] === undefined);
  const covers = purpose === "sign" ? "the signature covers" : "the quote prices";
  if (!mode.calculateGasLimits || (!chain.rpcUrl && !chain.bundlerUrl)) {
    if (missing.length === 0) return { userOp: userOp as SignableUserOperation, feesChosen: false };
    const remedy = mode.calculateGasLimits
      ? `chain ${chain.chainId} (${chain.name}) cannot estimate gas: it has no RPC or bundler configured`
      : "set calculateGasLimits to true to have them estimated";
    throw invalidParams(
      `params[0] is missing ${missing.join(", ")}: ${covers} the gas values, so send them or ${remedy}`,
    );
  }
  const started = performance.now();
  try {
    // A quote is asked before the wallet adds its approve: estimated as if the allowance were given, plus the approve's
    // gas. Never when signing: the operation signed must pay by itself.
    const approveToCome = purpose === "quote" && !approvesSpender(userOp.callData, chain.tokenPaymaster);
    const allowance = approveToCome
      ? await allowanceOverride(chain, terms.feeToken, userOp.sender, chain.tokenPaymaster)
      : undefined;
    if (approveToCome && !allowance) {
      ctx.log.warn(
        { chainId: chain.chainId, token: terms.feeToken },
        "fee token allowance slot not found: quote estimated on the real allowance",
      );
    }
    const { source, ...estimate } = await observedGasEstimate(ctx, {
      chain,
      userOp: {
        ...userOp,
        verificationGasLimit: maxOf(userOp.verificationGasLimit, TOKEN_POSTOP_MIN_VERIFICATION_GAS),
      },
      signature: accountSignature,
      paymasterStub: {
        paymaster: chain.tokenPaymaster,
        paymasterAndData: stubTokenPaymasterAndData({ ...terms, paymaster: chain.tokenPaymaster }),
        checksSender: true,
      },
      overrides: allowance ? [allowance] : [],
    });
    ctx.log.debug(
      { chainId: chain.chainId, source, mode: "ERC20", ms: Math.round(performance.now() - started) },
      "gas estimated",
    );
    return {
      userOp: {
        ...userOp,
        ...estimate,
        ...(allowance ? { callGasLimit: estimate.callGasLimit + QUOTED_APPROVE_GAS } : {}),
      },
      feesChosen: userOp.maxFeePerGas === undefined || userOp.maxPriorityFeePerGas === undefined,
    };
  } catch (error) {
    if (error instanceof OperationRevertedError) throw invalidParams(`Gas estimation failed: ${error.message}`);
    if (error instanceof EstimationUnavailableError) {
      ctx.log.warn({ chainId: chain.chainId, reason: error.message }, "gas estimation unavailable");
      throw new RpcError(
        ESTIMATION_UNAVAILABLE,
        `Gas estimation is unavailable on chain ${chain.chainId}: ${error.message}`,
        503,
      );
    }
    throw error;
  }
}

function maxOf(a: bigint | undefined, b: bigint): bigint {
  return a !== undefined && a > b ? a : b;
}
