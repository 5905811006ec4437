// ERC20 mode's checks and terms before anything is signed or quoted (docs/erc20-mode.md): the chain's token paymaster,
// the fee token asked for, its price now, the signing window, and the sender's balance.
import { type Address, erc20Abi, formatUnits, zeroAddress } from "viem";
import type { TokenFeeTerms } from "../bindings/paymasters/tokenPaymasterAndData";
import { chainClient } from "../chain/chainClient";
import { CLOCK_SKEW_SECONDS } from "../chain/clockSkew";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { TokenConfig } from "../config";
import type { TokenInfo } from "../schemas/rpc/mode";
import { readTokenPrice, tokenName } from "./price";
import { feeTerms } from "./quote";

/**
 * ERC20 mode cannot serve the request as asked (no token paymaster, a token the chain does not take, a sender short of
 * tokens); the message says why. The RPC layer answers it as invalid params (src/rpc/wireError.ts).
 */
export class FeeTokenRefusedError extends Error {
  override name = "FeeTokenRefusedError";
}

/** A chain that serves ERC20 mode: a token paymaster and at least one fee token. */
export type TokenChain = SponsoringChain & { tokenPaymaster: Address; tokens: readonly TokenConfig[] };

/**
 * Validation refuses an operation whose sender holds less than its maximum charge; saying so now is clearer than the
 * bundler's AA33 later. Where the chain has no RPC, or the read fails, the contract's own check is left to refuse.
 */
export async function requireBalance(
  chain: TokenChain,
  token: TokenConfig,
  sender: Address,
  maximum: bigint,
  log: { warn(object: object, message: string): void },
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
    log.warn({ chainId: chain.chainId, token: token.address, err: error }, "fee token balance not read");
    return;
  }
  if (balance < maximum) {
    const amount = (value: bigint) => `${formatUnits(value, token.decimals)} ${token.symbol}`;
    throw new FeeTokenRefusedError(
      `Sender ${sender} holds ${amount(balance)} of fee token ${tokenName(token)}, less than the ${amount(maximum)} ` +
        "this operation can be charged at most: the token paymaster would refuse it",
    );
  }
}

export function tokenChain(chain: SponsoringChain): TokenChain {
  if (!chain.tokenPaymaster || !chain.tokens || chain.tokens.length === 0) {
    throw new FeeTokenRefusedError(
      `mode ERC20 is not available on chain ${chain.chainId} (${chain.name}): no token paymaster is configured`,
    );
  }
  return chain as TokenChain;
}

function accepted(chain: TokenChain): string {
  return `chain ${chain.chainId} accepts ${chain.tokens.map(tokenName).join(", ")}`;
}

/**
 * The fee token asked for: required, not the zero address, and one of the chain's tokens. Its shape (an address, or
 * empty) was checked with the request's schema; `label` is where the request names it, as the caller knows.
 */
export function feeToken(value: string | null | undefined, chain: TokenChain, label: string): TokenConfig {
  if (value === undefined || value === null || value === "") {
    throw new FeeTokenRefusedError(
      `${label} is required in mode ERC20: the token that pays for the gas (${accepted(chain)})`,
    );
  }
  const address = value.toLowerCase();
  if (address === zeroAddress) {
    throw new FeeTokenRefusedError(`${label} is the zero address, which is no fee token (${accepted(chain)})`);
  }
  const token = chain.tokens.find((candidate) => candidate.address === address);
  if (!token) throw new FeeTokenRefusedError(`Fee token ${address} is not supported (${accepted(chain)})`);
  return token;
}

/** The quote's selection: preferredToken, else tokenList, else all; empty strings count as absent (SDKs send them). */
export function requestedTokens(
  tokenInfo: TokenInfo,
  chain: TokenChain,
): { tokens: TokenConfig[]; unsupported: string[] } {
  let requested: string[] | undefined;
  const { preferredToken, tokenList } = tokenInfo;
  if (preferredToken !== undefined && preferredToken !== null && preferredToken !== "") {
    requested = [preferredToken.toLowerCase()];
  } else if (tokenList !== undefined && tokenList !== null) {
    // Its length was checked where the request was read (src/rpc/tokenContext.ts), which knows where it stands.
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

function signingWindow(nowMs: number, expirySeconds: number): { validUntil: number; validAfter: number } {
  const nowSeconds = Math.floor(nowMs / 1000);
  return { validUntil: nowSeconds + expirySeconds, validAfter: nowSeconds - CLOCK_SKEW_SECONDS };
}

/**
 * The terms to sign or quote for `token` now: its price read now (a PriceUnavailableError refuses, a PriceReadError
 * is transient: src/rpc/wireError.ts tells them apart), in the window the request asks for, cut to the price's end.
 */
export async function termsNow(
  chain: TokenChain,
  token: TokenConfig,
  nowMs: number,
  expirySeconds: number,
): Promise<TokenFeeTerms> {
  return feeTerms(token, await readTokenPrice(chain, token, nowMs), signingWindow(nowMs, expirySeconds));
}

/** The one rule outcome an ERC-20 mode record carries, on every EntryPoint version: the token and the terms it pays at. */
export function erc20Outcome(token: TokenConfig, terms: TokenFeeTerms, maximum: bigint) {
  return {
    rule: "ERC20",
    passed: true,
    feeToken: token.address,
    symbol: token.symbol,
    decimals: token.decimals,
    priceSource: terms.priceSource,
    exchangeRate: terms.exchangeRate.toString(),
    priceMarkup: terms.priceMarkup,
    maxTokenCost: maximum.toString(),
  };
}
