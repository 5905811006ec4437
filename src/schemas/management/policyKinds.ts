// The words a policy is made of, listed once: the request schemas enumerate them, storage keeps them in its rows and
// the spending-limit arithmetic reads them. They live with the schemas so that every layer can import them downward.

export const POLICY_TYPES = [
  "PAYMASTER_SA_LIMIT",
  "WEBHOOK",
  "WALLET_DEPLOYMENT",
  "MAX_COST_PER_OP",
  "TIME_WINDOW",
] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export const LIMIT_SCOPES = ["PAYMASTER", "SMART_ACCOUNT"] as const;
export const THRESHOLD_TYPES = ["COUNT", "NATIVE_ASSET"] as const;
export const CYCLE_UNITS = ["hour", "day"] as const;
/** What a per-operation cap is written in; USD is accepted by the schema and refused until a native price exists. */
export const COST_CAP_TYPES = ["NATIVE_ASSET", "USD"] as const;
