import Type, { type Static, type TSchema } from "typebox";
import { messages } from "../../errors";
import { Address, Uuid } from "../primitives";
import {
  absentIsProblem,
  BadRequest,
  HttpUrl,
  Name,
  NotFound,
  Success,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withProblem,
} from "./common";
import { PagedSuccess, PageQuery } from "./paging";
import {
  COST_CAP_TYPES,
  CYCLE_UNITS,
  LIMIT_SCOPES,
  MAX_SENDER_LIST_ADDRESSES,
  POLICY_TYPES,
  type PolicyType,
  QUOTA_SCOPES,
  THRESHOLD_TYPES,
} from "./policyKinds";

/** A USD rule needs the native token's dollar price, which the chains file gives per chain. */
export const usdNeedsPrice = (label: string, chainId: number | string) =>
  `${label} USD needs the native token's dollar price, which the chains file does not give for chain ${chainId} ` +
  "(nativeUsdPrice): use NATIVE_ASSET or configure the price";

/**
 * Endpoints 8 to 14 and the extensions: a paymaster's rules (spending limits, webhooks, wallet deployment, cost caps,
 * time windows, sender lists), their usage and their general update.
 */

/** Cycles longer than this are surely a mistake, and would overflow the millisecond arithmetic long before. */
const MAX_CYCLE_VALUE = 100_000;
/** In ether for NATIVE_ASSET; far above any real budget, low enough to stay exact as a JSON number. */
const MAX_THRESHOLD = 1e15;

export const CycleDurationObject = Type.Object({
  value: absentIsProblem(
    withProblem(
      Type.Integer({ minimum: 1, maximum: MAX_CYCLE_VALUE, examples: [1] }),
      `must be a whole number from 1 to ${MAX_CYCLE_VALUE}`,
    ),
  ),
  unit: absentIsProblem(Type.Enum(CYCLE_UNITS)),
});

/** A regular-expression alternative that matches `word` in any case ("day" → "[dD][aA][yY]"). */
const anyCase = (word: string) => [...word].map((c) => `[${c.toLowerCase()}${c.toUpperCase()}]`).join("");
const TEXT_UNITS = ["minutes", "minute", "mins", "min", "hours", "hour", "h", "days", "day", "d", "weeks", "week", "w"]
  .concat(["months", "month", "mo"])
  .map(anyCase)
  .join("|");

/** "3 hour", "3h", "1 day", "2d", "30 min", "1 week", "2w", "1 month", "3mo", any case: read as {value, unit}. */
const CycleDurationText = withProblem(
  Type.String({
    pattern: `^\\s*\\d+\\s*(${TEXT_UNITS})\\s*$`,
    examples: ["3 hour", "1 day", "1 month"],
  }),
  'must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
);

export const CycleDuration = withProblem(Type.Union([CycleDurationObject, CycleDurationText]), {
  type: "must be a JSON object",
});

const ThresholdType = Type.Enum(THRESHOLD_TYPES, {
  description:
    "COUNT: user operations; NATIVE_ASSET: gas spend in ether; USD: gas spend in US dollars at the chain's native " +
    "token price (chains file, nativeUsdPrice)",
});

const Threshold = withProblem(
  Type.Number({
    exclusiveMinimum: 0,
    maximum: MAX_THRESHOLD,
    description: "Operations (a whole number, for COUNT), ether (for NATIVE_ASSET) or US dollars (for USD)",
    examples: [100],
  }),
  { type: "must be a positive number", exclusiveMinimum: "must be a positive number" },
);

const SpendingLimitData = Type.Object({
  type: Type.Enum(LIMIT_SCOPES, { description: "PAYMASTER: every operation of the dApp; SMART_ACCOUNT: per sender" }),
  cycleDuration: CycleDuration,
  thresholdType: ThresholdType,
  threshold: Threshold,
});

const WebhookData = Type.Object({ url: HttpUrl });
const WalletDeploymentData = Type.Object({}, { description: "No settings: sponsors operations that deploy a wallet" });

const MaxCostPerOpData = Type.Object(
  {
    threshold: Threshold,
    thresholdType: Type.Enum(COST_CAP_TYPES, {
      description:
        "NATIVE_ASSET: the cap in ether; USD: the cap in US dollars at the chain's native token price (chains file, " +
        "nativeUsdPrice)",
    }),
  },
  { description: "Refuses an operation whose worst-case cost exceeds the threshold" },
);

/** The last instant a JavaScript Date can hold, in ms: a window's bounds are shown as dates in refusals. */
const MAX_EPOCH_MS = 8_640_000_000_000_000;
const EpochMs = (description: string) =>
  withProblem(
    Type.Integer({ minimum: 0, maximum: MAX_EPOCH_MS, description, examples: [1767225600000] }),
    `must be a whole number of ms since the epoch, from 0 to ${MAX_EPOCH_MS}`,
  );

const TimeWindowData = Type.Object(
  {
    startTimeInEpoch: Type.Optional(EpochMs("First instant sponsored (ms since the epoch); none: from now on")),
    endTimeInEpoch: Type.Optional(EpochMs("First instant no longer sponsored (ms since the epoch); none: no end")),
  },
  { description: "Sponsors only from start (included) to end (excluded); at least one of the two, start before end" },
);

/** Messages of the window checks the schema cannot make (they compare two fields). */
export const TIME_WINDOW_EMPTY = "policyData needs startTimeInEpoch, endTimeInEpoch or both";
export const TIME_WINDOW_BACKWARDS = "policyData.startTimeInEpoch must be before policyData.endTimeInEpoch";

/** Each entry on its own: a bad one is named by its index ("policyData.addresses[3] must be …"). */
const SenderAddress = withProblem(
  Type.String({ pattern: "^0x[0-9a-fA-F]{40}$", examples: ["0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4"] }),
  "must be a 20-byte hex address",
);

const senderListData = (description: string) =>
  Type.Object(
    {
      addresses: Type.Array(SenderAddress, {
        maxItems: MAX_SENDER_LIST_ADDRESSES,
        description:
          `Up to ${MAX_SENDER_LIST_ADDRESSES} senders, any case; stored in lower case, a repeated address kept ` +
          "once, in the order first given",
      }),
    },
    { description },
  );
const SenderAllowlistData = senderListData(
  "Only these senders are sponsored (an empty list: none); with several allowlists, a sender must be in each",
);
const SenderBlocklistData = senderListData("These senders are never sponsored, whatever the other rules say");

/** Far above any fee a chain has charged (Ethereum's worst spikes were a few thousand gwei). */
const MAX_GWEI = 1e9;
const Gwei = (description: string) =>
  withProblem(
    Type.Number({ exclusiveMinimum: 0, maximum: MAX_GWEI, description, examples: [50] }),
    `must be a positive number of gwei, at most ${MAX_GWEI}`,
  );

const MaxGasPriceData = Type.Object(
  {
    maxFeePerGasGwei: Gwei("The highest maxFeePerGas sponsored, in gwei (decimals allowed: 0.05)"),
    maxPriorityFeePerGasGwei: Type.Optional(Gwei("The highest maxPriorityFeePerGas sponsored, in gwei; none: any")),
  },
  { description: "Refuses an operation whose fees are above the cap, so that a fee spike cannot drain the deposit" },
);

/** A day: a quota's window; longer ones are what a spending limit is for. */
const MAX_QUOTA_WINDOW_SECONDS = 86_400;
const MAX_QUOTA_LIMIT = 1_000_000;

const RateLimitData = Type.Object(
  {
    scope: Type.Enum(QUOTA_SCOPES, {
      description:
        "ip: per client address (X-Forwarded-For only from proxies TRUST_PROXY names); sender: per operation " +
        "sender; origin: per web page Origin header (calls without one share one quota)",
    }),
    limit: withProblem(
      Type.Integer({
        minimum: 1,
        maximum: MAX_QUOTA_LIMIT,
        description: "Requests allowed per window",
        examples: [60],
      }),
      `must be a whole number from 1 to ${MAX_QUOTA_LIMIT}`,
    ),
    windowSeconds: withProblem(
      Type.Integer({
        minimum: 1,
        maximum: MAX_QUOTA_WINDOW_SECONDS,
        description: "Length of the window, in seconds; windows start at multiples of it since the epoch",
        examples: [60],
      }),
      `must be a whole number of seconds from 1 to ${MAX_QUOTA_WINDOW_SECONDS}`,
    ),
  },
  {
    description:
      "A quota on the RPC endpoint: more than limit requests per window from one scope are answered with HTTP 429",
  },
);

export const CreatePolicyBody = Type.Union([
  Type.Object({ name: Name, policyType: Type.Literal("PAYMASTER_SA_LIMIT"), policyData: SpendingLimitData }),
  Type.Object({ name: Name, policyType: Type.Literal("WEBHOOK"), policyData: WebhookData }),
  Type.Object({ name: Name, policyType: Type.Literal("WALLET_DEPLOYMENT"), policyData: WalletDeploymentData }),
  Type.Object({ name: Name, policyType: Type.Literal("MAX_COST_PER_OP"), policyData: MaxCostPerOpData }),
  Type.Object({ name: Name, policyType: Type.Literal("TIME_WINDOW"), policyData: TimeWindowData }),
  Type.Object({ name: Name, policyType: Type.Literal("SENDER_ALLOWLIST"), policyData: SenderAllowlistData }),
  Type.Object({ name: Name, policyType: Type.Literal("SENDER_BLOCKLIST"), policyData: SenderBlocklistData }),
  Type.Object({ name: Name, policyType: Type.Literal("MAX_GAS_PRICE"), policyData: MaxGasPriceData }),
  Type.Object({ name: Name, policyType: Type.Literal("RATE_LIMIT"), policyData: RateLimitData }),
]);
export type CreatePolicyBody = Static<typeof CreatePolicyBody>;

/** The settings each kind of rule takes, for an update that knows the kind only once the rule is read. */
export const POLICY_DATA_SCHEMAS: Record<PolicyType, TSchema> = {
  PAYMASTER_SA_LIMIT: SpendingLimitData,
  WEBHOOK: WebhookData,
  WALLET_DEPLOYMENT: WalletDeploymentData,
  MAX_COST_PER_OP: MaxCostPerOpData,
  TIME_WINDOW: TimeWindowData,
  SENDER_ALLOWLIST: SenderAllowlistData,
  SENDER_BLOCKLIST: SenderBlocklistData,
  MAX_GAS_PRICE: MaxGasPriceData,
  RATE_LIMIT: RateLimitData,
};

/** A spending limit as stored: its cycle always in the object form (the text form is read into it on the way in). */
const StoredSpendingLimitData = Type.Object({ ...SpendingLimitData.properties, cycleDuration: CycleDurationObject });

/** A window as stored: one bound at least (creation checks it), and nothing else. */
const StoredTimeWindowData = withProblem(
  Type.Object(TimeWindowData.properties, { minProperties: 1, additionalProperties: false }),
  { minProperties: "needs startTimeInEpoch, endTimeInEpoch or both" },
);

/**
 * What each kind of rule keeps in its stored settings, as creation and update write them: storage reads every row back
 * through these (src/storage/policies.ts), so the code above it sees each rule's settings typed by its kind.
 */
export const STORED_POLICY_DATA = {
  PAYMASTER_SA_LIMIT: StoredSpendingLimitData,
  WEBHOOK: WebhookData,
  WALLET_DEPLOYMENT: WalletDeploymentData,
  MAX_COST_PER_OP: MaxCostPerOpData,
  TIME_WINDOW: StoredTimeWindowData,
  SENDER_ALLOWLIST: SenderAllowlistData,
  SENDER_BLOCKLIST: SenderBlocklistData,
  MAX_GAS_PRICE: MaxGasPriceData,
  RATE_LIMIT: RateLimitData,
} as const satisfies Record<PolicyType, TSchema>;

/** The stored settings of each kind of rule. */
export type StoredPolicyData = { [K in PolicyType]: Static<(typeof STORED_POLICY_DATA)[K]> };

export const UpdatePolicyBody = Type.Object(
  {
    name: Type.Optional(Name),
    policyData: Type.Optional(
      withProblem(
        Type.Object(
          {},
          {
            additionalProperties: true,
            description: "The rule's new settings, whole, in the shape its kind takes on creation",
          },
        ),
        "must be a JSON object",
      ),
    ),
    policyType: Type.Optional(
      Type.Enum(POLICY_TYPES, { description: "Optional; if given, the rule's own kind: a rule's kind never changes" }),
    ),
  },
  { description: "policyData, name or both; what is left out stays" },
);
export type UpdatePolicyBody = Static<typeof UpdatePolicyBody>;

/** Messages of the update checks the schema cannot make. */
export const UPDATE_POLICY_EMPTY = "Request body needs policyData, name or both";
export const policyKindFixed = (kind: string) => `policyType cannot change: this rule is a ${kind}`;

export const UpdateLimitBody = Type.Object(
  {
    thresholdType: Type.Optional(ThresholdType),
    cycleDuration: Type.Optional(CycleDuration),
    threshold: Type.Optional(Threshold),
    name: Type.Optional(Name),
  },
  { description: "Any of the limit's settings; what is left out stays. Every update restarts the cycle." },
);
export type UpdateLimitBody = Static<typeof UpdateLimitBody>;

const PolicyParams = Type.Object({
  policyId: Type.String({ description: "The rule's `_id` (UUID); any other id is not found" }),
});

const PolicyView = Type.Object({
  _id: Uuid,
  name: Type.String(),
  policyType: Type.Enum([...POLICY_TYPES, "WHITELISTED_CONTRACT"]),
  organisationId: Uuid,
  paymasterId: Uuid,
  createdBy: Uuid,
  chainId: Type.Integer(),
  active: Type.Boolean(),
  policyData: Type.Object(
    {},
    {
      additionalProperties: true,
      description:
        "The rule's settings; a spending limit adds startTimeInEpoch and durationInMs of its current cycle, a whitelisted contract shows address and whitelistedMethods",
    },
  ),
});

const LimitUsageAmounts = { used: Type.String(), remaining: Type.String() };
const LimitUsageView = Type.Object({
  policyId: Uuid,
  name: Type.String(),
  active: Type.Boolean(),
  type: Type.Enum(LIMIT_SCOPES),
  thresholdType: ThresholdType,
  threshold: Type.Number(),
  startTimeInEpoch: Type.Integer({ description: "Start of the current cycle, in ms since the epoch" }),
  durationInMs: Type.Integer(),
  used: Type.Optional(Type.String({ description: "PAYMASTER limits: used in this cycle" })),
  remaining: Type.Optional(Type.String()),
  senders: Type.Optional(
    Type.Array(Type.Object({ sender: Address, ...LimitUsageAmounts }), {
      description: "SMART_ACCOUNT limits: each sender's use in this cycle",
    }),
  ),
});

const unauthorized = Unauthorized(messages.authTokenAndApiKeyRequired);
const common = { tags: ["policies"], security: tokenAndApiKey };

export const createPolicySchema = {
  ...common,
  summary:
    "Add a rule: a spending limit, a webhook, wallet deployment, a per-operation cost cap, a time window, a sender " +
    "list, a gas-price cap or a request quota",
  body: CreatePolicyBody,
  response: {
    200: Success("Paymaster Policy created successfully", PolicyView),
    400: BadRequest(
      messages.policyNameExists,
      `policyType must be one of ${POLICY_TYPES.join(", ")}`,
      usdNeedsPrice("policyData.thresholdType", "<chainId>"),
      "policyData.addresses[3] must be a 20-byte hex address",
      `policyData.addresses must have at most ${MAX_SENDER_LIST_ADDRESSES} items`,
      TIME_WINDOW_BACKWARDS,
      `policyData.cycleDuration.unit must be one of ${CYCLE_UNITS.join(", ")}`,
      "policyData.threshold must be a positive number",
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const listPoliciesSchema = {
  ...common,
  summary: "List the rules, whitelisted contracts included (all, or a page with ?limit= and ?cursor=)",
  querystring: PageQuery,
  response: {
    200: PagedSuccess("Paymaster Policies found!", PolicyView),
    400: BadRequest("limit must be a whole number from 1 to 500"),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const updateLimitSchema = {
  ...common,
  summary: "Change a spending limit (and restart its cycle)",
  params: PolicyParams,
  body: UpdateLimitBody,
  response: {
    200: Success("Paymaster Limit updated"),
    400: BadRequest(
      "threshold must be a whole number of user operations when thresholdType is COUNT",
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
      usdNeedsPrice("thresholdType", "<chainId>"),
    ),
    401: unauthorized,
    404: NotFound(messages.policyNotFound),
    429: TooManyRequests,
  },
};

export const updatePolicySchema = {
  ...common,
  summary: "Replace a rule's settings and/or name (its kind stays; a spending limit's new settings restart its cycle)",
  params: PolicyParams,
  body: UpdatePolicyBody,
  response: {
    200: Success("Paymaster Policy updated", PolicyView),
    400: BadRequest(
      messages.policyNameExists,
      UPDATE_POLICY_EMPTY,
      policyKindFixed("SENDER_ALLOWLIST"),
      "policyData.addresses[3] must be a 20-byte hex address",
      "policyData.threshold must be a positive number",
    ),
    401: unauthorized,
    404: NotFound(messages.policyNotFound),
    429: TooManyRequests,
  },
};

export const setPolicyActiveSchema = (active: boolean, message: string) => ({
  ...common,
  summary: active ? "Turn a rule on" : "Turn a rule off",
  params: PolicyParams,
  response: {
    200: Success(message),
    401: unauthorized,
    404: NotFound(messages.policyNotFound),
    429: TooManyRequests,
  },
});

export const limitUsageSchema = {
  ...common,
  summary: "How much of each spending limit the current cycle has used",
  response: {
    200: Success("Paymaster limit usage fetched", Type.Array(LimitUsageView)),
    401: unauthorized,
    429: TooManyRequests,
  },
};
