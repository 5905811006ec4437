// The words a policy is made of, listed once: the request schemas enumerate them, storage keeps them in its rows and
// the spending-limit arithmetic reads them. They live with the schemas so that every layer can import them downward.

export const POLICY_TYPES = [
  "PAYMASTER_SA_LIMIT",
  "WEBHOOK",
  "WALLET_DEPLOYMENT",
  "MAX_COST_PER_OP",
  "TIME_WINDOW",
  "SENDER_ALLOWLIST",
  "SENDER_BLOCKLIST",
  "MAX_GAS_PRICE",
  "RATE_LIMIT",
] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export const LIMIT_SCOPES = ["PAYMASTER", "SMART_ACCOUNT"] as const;
export const THRESHOLD_TYPES = ["COUNT", "NATIVE_ASSET", "USD"] as const;
/** minute, hour and day cycles run back to back from their anchor; week and month follow the UTC calendar. */
export const CYCLE_UNITS = ["minute", "hour", "day", "week", "month"] as const;
/** What a per-operation cap is written in; USD needs the chain's native token price (chains file, nativeUsdPrice). */
export const COST_CAP_TYPES = ["NATIVE_ASSET", "USD"] as const;

/** The most addresses one sender list holds: checked in O(1) from a set, so its length costs memory, not time. */
export const MAX_SENDER_LIST_ADDRESSES = 100_000;

/** Whose requests a RATE_LIMIT quota counts together: one client address, one sender, or one web origin. */
export const QUOTA_SCOPES = ["ip", "sender", "origin"] as const;
