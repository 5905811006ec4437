// ERC20 mode's terms and fee quotes: what the token paymaster will be signed for, and what a wallet shows its user
// before choosing a token (docs/erc20-mode.md, 'Quotes and charges'). The quote's maximum is the contract's own
// maxTokenCost, to the base unit.
import { type Address, formatUnits } from "viem";
import { MIN_PRICE_MARKUP, type TokenFeeTerms } from "../bindings/paymasters/tokenPaymasterAndData";
import type { TokenConfig } from "../config";
import type { FeeQuote } from "../schemas/rpc/pm_getFeeQuoteOrData";
import type { TokenPrice } from "./price";

/** The signed window: the requested expiry, cut to the price's own end (an oracle answer ages out). */
export function feeTerms(
  token: TokenConfig,
  price: TokenPrice,
  window: { validUntil: number; validAfter: number },
): TokenFeeTerms {
  return {
    priceSource: price.priceSource,
    validUntil: price.validUntil === undefined ? window.validUntil : Math.min(window.validUntil, price.validUntil),
    validAfter: window.validAfter,
    feeToken: token.address as Address,
    oracleAggregator: price.oracleAggregator,
    exchangeRate: price.exchangeRate,
    priceMarkup: token.markup,
  };
}

/** "10", "12.5": the markup's millionths above 1e6 as a percentage, without trailing zeros. */
export function premiumPercentage(markup: number): string {
  return String((markup - MIN_PRICE_MARKUP) / 10_000);
}

/** The quote of a maximum charge already computed (src/bindings/paymasters/token.ts, maxTokenCost, per version). */
export function quoteOfMaximum(
  token: TokenConfig,
  terms: TokenFeeTerms,
  maximum: bigint,
): FeeQuote & { maxTokenCost: bigint } {
  const maxGasFee = Number(formatUnits(maximum, token.decimals));
  return {
    symbol: token.symbol,
    decimal: token.decimals,
    tokenAddress: token.address as Address,
    maxGasFee,
    maxGasFeeUSD: token.usdPrice === undefined ? null : maxGasFee * token.usdPrice,
    exchangeRate: Number(terms.exchangeRate),
    premiumPercentage: premiumPercentage(terms.priceMarkup),
    validUntil: terms.validUntil,
    logoUrl: token.logoUrl ?? null,
    maxTokenCost: maximum,
  };
}
