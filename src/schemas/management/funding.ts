import Type, { type Static, type TProperties } from "typebox";
import { messages } from "../../errors";
import {
  AddressField,
  BadRequest,
  HttpUrl,
  NotFound,
  Success,
  Text,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withProblem,
} from "./common";
import { PaymasterView } from "./paymasters";
import { MAX_SPONSOR_ICON_LENGTH } from "./sponsorIconLimit";
import { MAX_VALIDITY_BLOCKS } from "./validityBlocksLimit";

/** The funding-wallet flow: get a message to sign, send back its signature to link the signing wallet. */

const FundingMessageParams = Type.Object({
  paymasterId: Type.String({ description: "The paymaster's id (UUID); any other id is not found" }),
});

export const fundingMessageSchema = {
  summary: "Get a message whose signature links a funding wallet",
  tags: ["funding"],
  security: tokenAndApiKey,
  params: FundingMessageParams,
  response: {
    200: Success("Funding message sent", Type.Object({ fundingMessage: Type.String() })),
    401: Unauthorized(messages.authTokenAndApiKeyRequired),
    404: NotFound(messages.paymasterNotFound),
    429: TooManyRequests,
  },
};

/**
 * One body of the paymaster update (PATCH paymasterParameters): the paymaster it names, `type`, which says what changes,
 * and that change's fields.
 */
function paymasterUpdate<Kind extends string, Fields extends TProperties>(type: Kind, fields: Fields) {
  return Type.Object({
    paymasterId: Text(100, { description: "The paymaster's id (UUID)" }),
    type: Type.Literal(type),
    ...fields,
  });
}

export const LinkFundingWalletBody = paymasterUpdate("paymasterFundingId", {
  signature: withProblem(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: "^0x[0-9a-fA-F]*$",
      description: "EIP-191 signature of the latest funding message, as hex",
    }),
    { minLength: "must not be empty", pattern: "must be a 0x-prefixed hex string" },
  ),
  address: AddressField,
});
export type LinkFundingWalletBody = Static<typeof LinkFundingWalletBody>;

export const SetPaymasterActiveBody = paymasterUpdate("active", {
  active: Type.Boolean({
    description: "false pauses the whole paymaster (every RPC request refused), true resumes it",
  }),
});
export type SetPaymasterActiveBody = Static<typeof SetPaymasterActiveBody>;

export const SetDepositAlertBody = paymasterUpdate("depositAlert", {
  thresholdWei: withProblem(
    Type.String({
      pattern: "^[0-9]{1,78}$",
      description:
        "deposit.low is sent when the deposit less what unexpired sponsorships can still cost falls below this, " +
        "in wei as a decimal string",
      examples: ["100000000000000000"],
    }),
    "must be a whole number of wei as a decimal string (digits only, at most 78)",
  ),
  url: Type.Union([HttpUrl, Type.Null()], {
    description:
      "Where the alerts are POSTed (deposit.low and limit.reached), checked like a webhook URL; null turns alerts off",
  }),
});
export type SetDepositAlertBody = Static<typeof SetDepositAlertBody>;

/** The longest grace period of a rotated apiKey: 30 days. */
const MAX_GRACE_SECONDS = 30 * 24 * 3600;

export const RotateApiKeyBody = paymasterUpdate("rotateApiKey", {
  graceSeconds: withProblem(
    Type.Integer({
      minimum: 0,
      maximum: MAX_GRACE_SECONDS,
      description:
        "How long the replaced apiKey keeps working (management header and RPC URL), in seconds; 0: it stops at once",
      examples: [3600],
    }),
    `must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`,
  ),
});
export type RotateApiKeyBody = Static<typeof RotateApiKeyBody>;

export const SetSponsorInfoBody = paymasterUpdate("sponsorInfo", {
  name: Type.Union([Text(100), Type.Null()], {
    description:
      "The sponsor wallets show for this paymaster's operations (ERC-7677's sponsor.name); null removes the sponsor",
    examples: ["My dApp"],
  }),
  icon: Type.Optional(
    // The length is checked by the action, whose message gives the icon's length and the bound.
    Type.Union([Text(), Type.Null()], {
      description:
        "ERC-7677's sponsor.icon: a PNG, WebP or SVG image as an RFC 2397 data URI (data:image/png;base64,…), at " +
        `most ${MAX_SPONSOR_ICON_LENGTH} characters; an SVG may carry no script. Absent or null: no icon`,
      examples: ["data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4="],
    }),
  ),
});
export type SetSponsorInfoBody = Static<typeof SetSponsorInfoBody>;

/** The most origins one paymaster lists: enough for every domain and preview of a dApp, checked from a set. */
const MAX_ALLOWED_ORIGINS = 100;

const WebOrigin = withProblem(
  Type.String({
    maxLength: 200,
    pattern: "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#\\s]+/?$",
    description:
      "A web origin: scheme://host[:port], no path; stored as browsers send it (lower case, no default port)",
    examples: ["https://app.example.com"],
  }),
  "must be a web origin like https://app.example.com (scheme, host and port only, at most 200 characters)",
);

export const SetAllowedOriginsBody = paymasterUpdate("allowedOrigins", {
  origins: Type.Array(WebOrigin, {
    maxItems: MAX_ALLOWED_ORIGINS,
    description:
      "Browsers may call the RPC URL only from these origins (403 from any other, and no preflight); an empty list: " +
      "any origin",
  }),
  requireOrigin: Type.Optional(
    Type.Boolean({
      description:
        "true: calls without an Origin header (servers, bundlers, scripts) are refused too; left out: unchanged",
    }),
  ),
});
export type SetAllowedOriginsBody = Static<typeof SetAllowedOriginsBody>;

const VALIDITY_BLOCKS_PROBLEM = `must be a whole number of blocks from 1 to ${MAX_VALIDITY_BLOCKS}, or null for a window in seconds`;

export const SetValidityBlocksBody = paymasterUpdate("validityBlocks", {
  blocks: withProblem(
    Type.Union(
      [withProblem(Type.Integer({ minimum: 1, maximum: MAX_VALIDITY_BLOCKS }), VALIDITY_BLOCKS_PROBLEM), Type.Null()],
      {
        description:
          "How many blocks past the chain's head an EntryPoint v0.9 signature of SPONSORED mode stays valid: its " +
          "validAfter and validUntil are then block numbers (bit 47 set). Earlier EntryPoints, and ERC20 mode, keep " +
          "windows in seconds. null: windows in seconds on v0.9 too",
        examples: [150],
      },
    ),
    VALIDITY_BLOCKS_PROBLEM,
  ),
});
export type SetValidityBlocksBody = Static<typeof SetValidityBlocksBody>;

/**
 * The paymaster update: link a funding wallet, pause and resume the whole paymaster, set its alerts, its sponsor, the
 * origins its RPC URL answers browsers from or its v0.9 validity in blocks, or rotate its apiKey.
 */
const UpdatePaymasterBody = Type.Union([
  LinkFundingWalletBody,
  SetPaymasterActiveBody,
  SetDepositAlertBody,
  SetSponsorInfoBody,
  SetAllowedOriginsBody,
  SetValidityBlocksBody,
  RotateApiKeyBody,
]);

export const linkFundingWalletSchema = {
  summary:
    "Link the wallet that signed the latest funding message, pause and resume the whole paymaster, set its alerts, " +
    "the sponsor (name and icon) wallets show, the origins browsers may call it from or its v0.9 validity in blocks, " +
    "or rotate its apiKey",
  tags: ["funding"],
  security: tokenAndApiKey,
  body: UpdatePaymasterBody,
  response: {
    200: Success(
      "Paymaster updated successfully",
      Type.Object({
        ...PaymasterView.properties,
        previousApiKeyValidUntil: Type.Optional(
          Type.Union([Type.String(), Type.Null()], {
            description:
              "rotateApiKey only: until when (ISO 8601) the replaced apiKey keeps working; null: it stopped at once",
          }),
        ),
      }),
    ),
    400: BadRequest(
      messages.invalidSignature,
      "signature must be a 0x-prefixed hex string",
      "thresholdWei must be a whole number of wei as a decimal string (digits only, at most 78)",
      "url resolves to 10.0.0.5, a private address",
      "icon has media type image/gif; only image/png, image/webp and image/svg+xml are accepted",
      "origins[0] must be a web origin like https://app.example.com (scheme, host and port only, at most 200 characters)",
      `graceSeconds must be a whole number of seconds from 0 to ${MAX_GRACE_SECONDS}`,
      `blocks must be a whole number of blocks from 1 to ${MAX_VALIDITY_BLOCKS}, or null for a window in seconds`,
    ),
    401: Unauthorized(messages.authTokenAndApiKeyRequired),
    404: NotFound(messages.paymasterNotFound, messages.userNotFound),
    429: TooManyRequests,
  },
};

const DepositOfVersion = Type.Object({
  version: Type.Union([Type.Literal("0.6"), Type.Literal("0.7"), Type.Literal("0.8"), Type.Literal("0.9")]),
  entryPoint: Type.String({ description: "The EntryPoint of this version on the paymaster's chain" }),
  verifyingPaymaster: Type.Union([Type.String(), Type.Null()], {
    description: "Our verifying paymaster for this EntryPoint; null where the chain has none",
  }),
  balance: Type.Union([Type.String(), Type.Null()], {
    description:
      "The funding wallet's deposit in that paymaster (getBalance), wei as a decimal string; null if unknown",
  }),
  error: Type.Optional(Type.String({ description: "Why the balance is null" })),
  held: Type.Union([Type.String(), Type.Null()], {
    description:
      "What the unexpired, unsettled sponsorships against this deposit may still cost (their worst case), wei; " +
      "null when the balance is unknown",
  }),
  available: Type.Union([Type.String(), Type.Null()], {
    description:
      "balance less held (never below 0): what new sponsorships can use, wei; null when the balance is unknown",
  }),
});

export const fundingBalanceSchema = {
  summary: "The funding wallet's deposit in our verifying paymaster of each EntryPoint version",
  description:
    "The top-level entryPoint, verifyingPaymaster and balance are EntryPoint v0.6's; entryPoints lists every version " +
    "the paymaster's chain serves, v0.6 first. Balances are read from the chain on each request.",
  tags: ["funding"],
  security: tokenAndApiKey,
  params: FundingMessageParams,
  response: {
    200: Success(
      "Funding balance fetched",
      Type.Object({
        paymasterId: Type.String(),
        chainId: Type.Integer(),
        fundingWalletAddress: Type.Union([Type.String(), Type.Null()]),
        entryPoint: Type.String({ description: "EntryPoint v0.6" }),
        verifyingPaymaster: Type.Union([Type.String(), Type.Null()], { description: "The v0.6 verifying paymaster" }),
        balance: Type.Union([Type.String(), Type.Null()], { description: "The v0.6 deposit, wei" }),
        error: Type.Optional(Type.String()),
        entryPoints: Type.Array(DepositOfVersion),
      }),
    ),
    401: Unauthorized(messages.authTokenAndApiKeyRequired),
    404: NotFound(messages.paymasterNotFound),
    429: TooManyRequests,
  },
};
