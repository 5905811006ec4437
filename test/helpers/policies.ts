// Rules built by hand for the sponsorship tests, read through storage's own reader (readPolicy), so that a test's rule
// has exactly the settings a stored row of its kind can have.
import assert from "node:assert/strict";
import type { StoredPolicyData } from "../../src/schemas/management/policies";
import type { PolicyType } from "../../src/schemas/management/policyKinds";
import { isReadable, type Policy, type ReadablePolicy, readPolicy } from "../../src/storage/policies";

/** Settings of each kind that any rule of it may have, for tests where the settings do not matter. */
const SAMPLE_DATA: StoredPolicyData = {
  PAYMASTER_SA_LIMIT: {
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    thresholdType: "COUNT",
    threshold: 1_000_000,
  },
  WEBHOOK: { url: "https://hooks.example.com/verify" },
  WALLET_DEPLOYMENT: {},
  MAX_COST_PER_OP: { threshold: 1_000_000, thresholdType: "NATIVE_ASSET" },
  TIME_WINDOW: { startTimeInEpoch: 0 },
  SENDER_ALLOWLIST: { addresses: [] },
  SENDER_BLOCKLIST: { addresses: [] },
  MAX_GAS_PRICE: { maxFeePerGasGwei: 1_000_000 },
  RATE_LIMIT: { scope: "ip", limit: 1_000_000, windowSeconds: 60 },
};

/** The rule as storage would read it, whatever its settings (readable or not). */
export function storedPolicy(policyType: PolicyType, policyData: unknown, name: string = policyType): Policy {
  return readPolicy({
    id: `id-${name}`,
    paymasterId: "pm",
    createdBy: "account",
    name,
    policyType,
    active: true,
    policyData,
    cycleStartMs: policyType === "PAYMASTER_SA_LIMIT" ? 0 : null,
  });
}

/** A rule storage read, which the test requires to be readable. */
export function readable(policy: Policy): ReadablePolicy {
  assert.ok(isReadable(policy), `test rule "${policy.name}": ${policy.unreadable}`);
  return policy;
}

/** An active rule of `policyType` with `policyData` (a sample of its kind when not given); the test fails on bad data. */
export function testPolicy<K extends PolicyType>(
  policyType: K,
  policyData: StoredPolicyData[K] = SAMPLE_DATA[policyType],
  name: string = policyType,
): Extract<ReadablePolicy, { policyType: K }> {
  // Read back as the kind it was made of: narrowing on a type parameter is beyond TypeScript.
  return readable(storedPolicy(policyType, policyData, name)) as Extract<ReadablePolicy, { policyType: K }>;
}
