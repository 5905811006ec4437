import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import {
  AddressField,
  BadRequest,
  Success,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withProblem,
} from "./common";
import { PageQuery } from "./paging";

/** The ledger of a paymaster's sponsorship answers and its statistics (docs/management-api.md, 'Sponsorship ledger'). */

const LEDGER_STATUSES = ["pending", "mined", "expired", "refused"] as const;
export const STATS_BUCKETS = ["hour", "day"] as const;
/** A stats answer has at most this many buckets: 41 days by hour, 2.7 years by day. */
export const MAX_STATS_BUCKETS = 1000;

/** A time in the query string: whole milliseconds since the epoch, up to the end of year 9999. */
const Millis = (what: string) =>
  withProblem(
    Type.String({
      pattern: "^\\d{1,15}$",
      description: `${what}, in milliseconds since the epoch (UTC)`,
      examples: ["1767225600000"],
    }),
    "must be a time in milliseconds since the epoch: a whole number",
  );

const Status = withProblem(
  Type.String({ enum: [...LEDGER_STATUSES], description: "Only the rows with this status" }),
  `must be one of ${LEDGER_STATUSES.join(", ")}`,
);

export const LedgerQuery = Type.Object({
  status: Type.Optional(Status),
  sender: Type.Optional({ ...AddressField, description: "Only this sender's operations" }),
  from: Type.Optional(Millis("Only rows created at or after this instant")),
  to: Type.Optional(Millis("Only rows created before this instant")),
  ...PageQuery.properties,
});
export type LedgerQuery = Static<typeof LedgerQuery>;

const Wei = Type.String({ pattern: "^\\d+$", description: "wei, as a decimal text", examples: ["290000000000000"] });
const Dollars = (description: string) =>
  Type.String({
    pattern: "^\\d+(\\.\\d{1,18})?$",
    description: `${description}; a decimal text`,
    examples: ["12.345678"],
  });
const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const TokenUnits = Type.Union([Type.String({ pattern: "^\\d+$" }), Type.Null()]);

const LedgerToken = Type.Object(
  {
    feeToken: Type.String({ description: "The fee token's address" }),
    symbol: NullableText("The token's symbol, as the chains file gave it"),
    decimals: Type.Union([Type.Integer(), Type.Null()], {
      description: "The token's decimals; null on rows signed before they were recorded",
    }),
    maxCharge: { ...TokenUnits, description: "The most the operation can be charged, in base units (decimal)" },
    charge: {
      ...TokenUnits,
      description:
        "What the sender paid, in base units, once mined (the whole maximum where the up-front token paymaster's " +
        "refund failed); null otherwise",
    },
    refund: {
      ...TokenUnits,
      description:
        "What the up-front token paymaster gave back of the maximum it took before the call, in base units, once " +
        "mined (0 from the approve-in-batch token paymaster); null otherwise",
    },
  },
  { description: "ERC20 mode's signed rows only: the fee token and the amounts in it" },
);

const LedgerRowView = Type.Object({
  userOpHash: NullableText("The operation's hash; null for a refusal (nothing was signed)"),
  sender: Type.String(),
  nonce: Type.String({ description: "decimal" }),
  chainId: Type.Integer(),
  entryPoint: NullableText("The EntryPoint the operation was signed for; null on rows recorded before it was kept"),
  mode: Type.Union([Type.Literal("SPONSORED"), Type.Literal("ERC20")]),
  status: Type.Union(LEDGER_STATUSES.map((status) => Type.Literal(status))),
  reason: NullableText("Why it was refused; null otherwise"),
  worstCaseWei: Type.Union([Wei, Type.Null()], {
    description: "The most the operation can cost (its prefund); null for a refusal",
  }),
  l1DataGas: Type.Union([Type.String({ pattern: "^\\d+$" }), Type.Null()], {
    description:
      "The L1 data fee's part of preVerificationGas, in gas, where the service estimated the operation's gas (0 on a " +
      "chain without an L1 fee); null where the gas was signed as the client sent it",
  }),
  actualWei: Type.Union([Wei, Type.Null()], { description: "What it cost, once mined; null otherwise" }),
  transactionHash: NullableText("The transaction that ran it, once mined; null otherwise"),
  createdAt: Type.Integer({ description: "When the service answered, ms since the epoch" }),
  settledAt: Type.Union([Type.Integer(), Type.Null()], {
    description: "When settlement recorded it mined or released it (ms); null before, and for refusals",
  }),
  nativeUsdPrice: Type.Optional(
    Type.String({
      description:
        "Only on an operation a USD rule priced when it was signed: the native token price it used (dollars per token)",
    }),
  ),
  worstCaseUsd: Type.Optional(
    Type.Union([Dollars("worstCaseWei at nativeUsdPrice, rounded up to 10^-18 dollar"), Type.Null()]),
  ),
  actualUsd: Type.Optional(
    Type.Union([Dollars("actualWei at nativeUsdPrice, rounded up to 10^-18 dollar; null until mined"), Type.Null()]),
  ),
  token: Type.Optional(LedgerToken),
});

const unauthorized = Unauthorized(messages.authTokenAndApiKeyRequired);
const common = { tags: ["sponsorships"], security: tokenAndApiKey };

export const ledgerSchema = {
  ...common,
  summary: "The sponsorship ledger: every answer of this paymaster, newest first, a page at a time",
  querystring: LedgerQuery,
  response: {
    200: Type.Object({
      ...Success("Sponsorships fetched", Type.Array(LedgerRowView)).properties,
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: "The cursor of the next page, null after the last",
      }),
    }),
    400: BadRequest(
      `status must be one of ${LEDGER_STATUSES.join(", ")}`,
      "from must be a time in milliseconds since the epoch: a whole number",
      "from must not be after to",
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const StatsQuery = Type.Object({
  bucket: Type.Optional(
    withProblem(Type.String({ enum: [...STATS_BUCKETS], description: "Bucket length (UTC); day by default" }), {
      enum: `must be one of ${STATS_BUCKETS.join(", ")}`,
    }),
  ),
  from: Type.Optional(Millis("Start of the range (included); by default 30 buckets before `to`")),
  to: Type.Optional(Millis("End of the range (excluded); by default now")),
});
export type StatsQuery = Static<typeof StatsQuery>;

const Count = Type.Integer({ minimum: 0 });

const StatsBucketView = Type.Object({
  start: Type.Integer({ description: "The bucket's first instant, ms since the epoch (UTC)" }),
  counts: Type.Object({ pending: Count, mined: Count, expired: Count, refused: Count }),
  spendWei: { ...Wei, description: "What mined SPONSORED operations of the bucket cost the deposit" },
  heldWei: {
    ...Wei,
    description: "The worst case of the bucket's pending SPONSORED operations: what they may still cost",
  },
  spendUsd: Type.Optional(
    Dollars(
      "spendWei in dollars, only when the chain has a native token price: each operation at the price recorded when " +
        "it was signed, else at nativeUsdPrice; each rounded up to 10^-18 dollar",
    ),
  ),
  heldUsd: Type.Optional(Dollars("heldWei in dollars, valued as spendUsd")),
  usdComplete: Type.Optional(
    Type.Boolean({
      description:
        "With spendUsd: false when some operations of spendWei or heldWei recorded no price and the current price " +
        "could not be read (nativeUsdPrice null), so the dollar figures leave them out",
    }),
  ),
});

export const statsSchema = {
  ...common,
  summary: "The ledger per hour or day: counts by status and spend",
  querystring: StatsQuery,
  response: {
    200: Success(
      "Sponsorship stats fetched",
      Type.Object({
        bucket: Type.Union(STATS_BUCKETS.map((bucket) => Type.Literal(bucket))),
        from: Type.Integer({ description: "The first bucket's start (ms): `from` rounded down to the bucket" }),
        to: Type.Integer({ description: "The end of the range (ms, excluded), as asked" }),
        buckets: Type.Array(StatsBucketView, {
          description: "Every bucket of the range in order, empty ones included",
        }),
        nativeUsdPrice: Type.Optional(
          Type.Union([Type.String(), Type.Null()], {
            description:
              "Only when the chain has a native token price configured: dollars per native token read now, which " +
              "values the operations that recorded no price; null when it could not be read (nativeUsdPriceError)",
          }),
        ),
        nativeUsdPriceError: Type.Optional(
          Type.String({ description: "Why the current price could not be read, when nativeUsdPrice is null" }),
        ),
      }),
    ),
    400: BadRequest(
      `bucket must be one of ${STATS_BUCKETS.join(", ")}`,
      "from must not be after to",
      `from and to span 2000 buckets of a hour; at most ${MAX_STATS_BUCKETS}`,
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};
