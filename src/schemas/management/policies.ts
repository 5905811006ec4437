import Type, { type Static } from "typebox";
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
import { COST_CAP_TYPES, CYCLE_UNITS, LIMIT_SCOPES, POLICY_TYPES, THRESHOLD_TYPES } from "./policyKinds";

/** A USD cap needs the native token's dollar price, which the chains file cannot give yet. */
export const COST_CAP_USD_REFUSED =
  "policyData.thresholdType USD needs a native token price, which is not yet configurable: use NATIVE_ASSET";

/** Endpoints 8 to 14 and the usage extension: a paymaster's rules (spending limits, webhooks, wallet deployment, cost caps, time windows). */

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

/** "3 hour", "3 hours", "3h", "1 day", "2d", any case: read as {value, unit}. */
const CycleDurationText = withProblem(
  Type.String({
    pattern: "^\\s*\\d+\\s*([hH]([oO][uU][rR][sS]?)?|[dD]([aA][yY][sS]?)?)\\s*$",
    examples: ["3 hour", "1 day"],
  }),
  'must be an object {value, unit} or a text like "3 hour" or "1 day"',
);

export const CycleDuration = withProblem(Type.Union([CycleDurationObject, CycleDurationText]), {
  type: "must be a JSON object",
});

const ThresholdType = Type.Enum(THRESHOLD_TYPES, {
  description: "COUNT: user operations; NATIVE_ASSET: gas spend in ether",
});

const Threshold = withProblem(
  Type.Number({
    exclusiveMinimum: 0,
    maximum: MAX_THRESHOLD,
    description: "Operations (a whole number, for COUNT) or ether (for NATIVE_ASSET)",
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
      description: "NATIVE_ASSET: the cap in ether; USD is refused until a native token price can be configured",
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

export const CreatePolicyBody = Type.Union([
  Type.Object({ name: Name, policyType: Type.Literal("PAYMASTER_SA_LIMIT"), policyData: SpendingLimitData }),
  Type.Object({ name: Name, policyType: Type.Literal("WEBHOOK"), policyData: WebhookData }),
  Type.Object({ name: Name, policyType: Type.Literal("WALLET_DEPLOYMENT"), policyData: WalletDeploymentData }),
  Type.Object({ name: Name, policyType: Type.Literal("MAX_COST_PER_OP"), policyData: MaxCostPerOpData }),
  Type.Object({ name: Name, policyType: Type.Literal("TIME_WINDOW"), policyData: TimeWindowData }),
]);
export type CreatePolicyBody = Static<typeof CreatePolicyBody>;

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
  summary: "Add a rule: a spending limit, a webhook, wallet deployment, a per-operation cost cap or a time window",
  body: CreatePolicyBody,
  response: {
    200: Success("Paymaster Policy created successfully", PolicyView),
    400: BadRequest(
      messages.policyNameExists,
      "policyType must be one of PAYMASTER_SA_LIMIT, WEBHOOK, WALLET_DEPLOYMENT, MAX_COST_PER_OP, TIME_WINDOW",
      COST_CAP_USD_REFUSED,
      TIME_WINDOW_BACKWARDS,
      "policyData.cycleDuration.unit must be one of hour, day",
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
      'cycleDuration must be an object {value, unit} or a text like "3 hour" or "1 day"',
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
