// The words a policy is made of, listed once: the request schemas enumerate them, storage keeps them in its rows and
// the spending-limit arithmetic reads them. They live with the schemas so that every layer can import them downward.

export const POLICY_TYPES = ["PAYMASTER_SA_LIMIT", "WEBHOOK", "WALLET_DEPLOYMENT"] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export const LIMIT_SCOPES = ["PAYMASTER", "SMART_ACCOUNT"] as const;
export const THRESHOLD_TYPES = ["COUNT", "NATIVE_ASSET"] as const;
export const CYCLE_UNITS = ["hour", "day"] as const;
