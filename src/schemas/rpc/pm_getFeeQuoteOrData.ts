import Type, { type Static } from "typebox";
import { Address } from "../primitives";
import { withOptions } from "./messages";
import type { MethodDescriptor } from "./method";
import { SponsoredResult, sponsorParams } from "./pm_sponsorUserOperation";

/** One entry of `feeQuotes`, with the field names and types the SDKs read. */
export const FeeQuote = Type.Object(
  {
    symbol: Type.String(),
    decimal: Type.Integer({ minimum: 0 }),
    tokenAddress: Address,
    maxGasFee: Type.Number({
      description: "whole tokens: the most the operation as quoted can be charged (the markup included)",
    }),
    maxGasFeeUSD: Type.Union([Type.Number(), Type.Null()], {
      description: "maxGasFee in US dollars when the token's configuration gives its usdPrice, else null",
    }),
    exchangeRate: Type.Number({
      description: "token base units per 1e18 wei (per whole native token), as the contract uses it",
    }),
    premiumPercentage: Type.String({ description: 'the markup as a percentage, e.g. "10" for 1.1e6 millionths' }),
    validUntil: Type.Integer({ description: "unix seconds: the end of the window a signature given now would carry" }),
    logoUrl: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "FeeQuote" },
);
export type FeeQuote = Static<typeof FeeQuote>;

export const Erc20QuoteResult = Type.Object(
  {
    mode: Type.Literal("ERC20"),
    MODE: Type.Literal("ERC20"),
    paymasterAddress: withOptions(Address, { description: "the spender to approve: the token paymaster" }),
    feeQuotes: Type.Array(FeeQuote),
    unsupportedTokens: Type.Array(Type.String(), {
      description: "requested tokens this chain takes no fee in or cannot price now, lowercase",
    }),
  },
  { title: "Erc20QuoteResult", description: "ERC20 mode: a quote per token, nothing signed" },
);
export type Erc20QuoteResult = Static<typeof Erc20QuoteResult>;

export const pm_getFeeQuoteOrData: MethodDescriptor = {
  name: "pm_getFeeQuoteOrData",
  summary: "Quote the fee in tokens (ERC20), or sponsor (SPONSORED)",
  description:
    "ERC20 mode: the fee quotes of the requested tokens (preferredToken, else tokenList, else every token of the " +
    "chain), nothing signed. SPONSORED mode: exactly the answer of pm_sponsorUserOperation. For EntryPoint v0.7, " +
    "v0.8 and v0.9 operations, [userOp, entryPoint, context] with token or preferredToken, tokenList or mode ERC20 in " +
    "the context asks for quotes, maxGasFee from the version's prefund; any other context is a sponsorship.",
  params: sponsorParams,
  result: {
    name: "quoteOrSponsorship",
    description: "fee quotes (ERC20) or the sponsorship (SPONSORED)",
    schema: Type.Union([Erc20QuoteResult, SponsoredResult]),
  },
  errors: [-32002, -32003],
};

/** The misspelling some clients send: the same method. */
export const pm_getFeeQuotesOrData: MethodDescriptor = {
  ...pm_getFeeQuoteOrData,
  name: "pm_getFeeQuotesOrData",
  summary: "The same as pm_getFeeQuoteOrData (a spelling some clients send)",
};
