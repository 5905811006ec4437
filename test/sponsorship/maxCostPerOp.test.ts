// The per-operation cost cap (MAX_COST_PER_OP) on operations of every EntryPoint version: the worst case it compares,
// the edge at exactly the cap, several caps, and the refusal of a cap it cannot read.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07, SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import type { RuleInput } from "../../src/sponsorship/rule";
import { maxCostPerOp } from "../../src/sponsorship/rules/maxCostPerOp";
import type { Policy } from "../../src/storage/policies";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const GWEI = 10n ** 9n;

/** v0.6: (100,000 + 3 × 100,000 + 100,000) × 2 gwei = 0.001 ether. */
const V06: PartialUserOperation = {
  sender: SENDER,
  nonce: 0n,
  initCode: "0x",
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas: 2n * GWEI,
  maxPriorityFeePerGas: GWEI,
};
/** v0.7 and v0.8: (100,000 + 100,000 + 150,000 + 50,000 + 100,000) × 2 gwei = 0.001 ether. */
const v07 = (entryPointVersion: "0.7" | "0.8"): PartialUserOperationV07 => ({
  entryPointVersion,
  sender: SENDER,
  nonce: 0n,
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 100_000n,
  paymasterVerificationGasLimit: 150_000n,
  paymasterPostOpGasLimit: 50_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas: 2n * GWEI,
  maxPriorityFeePerGas: GWEI,
});

function cap(name: string, policyData: Record<string, unknown>): Policy {
  return {
    id: `id-${name}`,
    paymasterId: "pm",
    createdBy: "account",
    name,
    policyType: "MAX_COST_PER_OP",
    active: true,
    policyData,
    cycleStartMs: null,
  };
}
const ether = (threshold: number) => ({ threshold, thresholdType: "NATIVE_ASSET" });

function input(userOp: SponsoredUserOperation, policies: Policy[]): RuleInput {
  return {
    setup: {
      paymasterId: "pm",
      accountId: "account",
      chainId: 31337,
      fundingAddress: SENDER,
      policies,
      contracts: new Map(),
      webhooks: [],
    },
    userOp,
    nowMs: 0,
    validUntil: 300,
  };
}

const over = (name: string, worst: string, capEther: string) => ({
  rule: "maxCostPerOp",
  passed: false,
  reason: `Cost cap "${name}" exceeded: this operation may cost up to ${worst} ETH, above the cap of ${capEther} ETH per operation`,
});
const passed = { rule: "maxCostPerOp", passed: true };

for (const [version, op] of [
  ["0.6", V06],
  ["0.7", v07("0.7")],
  ["0.8", v07("0.8")],
] as const) {
  describe(`maxCostPerOp on an EntryPoint v${version} operation costing 0.001 ether at worst`, () => {
    const cases: { name: string; policies: Policy[]; expected: unknown }[] = [
      { name: "no cap: passes", policies: [], expected: passed },
      { name: "a cap exactly at the worst case: passes", policies: [cap("one op", ether(0.001))], expected: passed },
      { name: "a cap above: passes", policies: [cap("one op", ether(0.0011))], expected: passed },
      {
        name: "a cap one wei below: refused with both figures",
        policies: [cap("one op", ether(0.000999999999999999))],
        expected: over("one op", "0.001", "0.000999999999999999"),
      },
      {
        name: "two caps: the first one exceeded is named",
        policies: [cap("loose", ether(1)), cap("tight", ether(0.0005))],
        expected: over("tight", "0.001", "0.0005"),
      },
      {
        name: "a cap in USD (never stored by the API): refused, not ignored",
        policies: [cap("dollars", { threshold: 5, thresholdType: "USD" })],
        expected: { rule: "maxCostPerOp", passed: false, reason: 'Cost cap "dollars" has unreadable settings' },
      },
      {
        name: "a cap without a threshold: refused",
        policies: [cap("broken", { thresholdType: "NATIVE_ASSET" })],
        expected: { rule: "maxCostPerOp", passed: false, reason: 'Cost cap "broken" has unreadable settings' },
      },
      {
        name: "other rule kinds are not caps",
        policies: [{ ...cap("limit", ether(0.0000001)), policyType: "PAYMASTER_SA_LIMIT" }],
        expected: passed,
      },
    ];
    for (const { name, policies, expected } of cases) {
      test(name, () => assert.deepEqual(maxCostPerOp.evaluate(input(op, policies)), expected));
    }
  });
}

test("v0.6 counts the verification limit three times, v0.7 the paymaster's own limits: different worst cases", () => {
  const moreVerification = { ...V06, verificationGasLimit: 200_000n };
  // v0.6: (100k + 600k + 100k) × 2 gwei = 0.0016 ether; the same change on v0.7 adds only 100k × 2 gwei.
  assert.deepEqual(
    maxCostPerOp.evaluate(input(moreVerification, [cap("c", ether(0.0012))])),
    over("c", "0.0016", "0.0012"),
  );
  assert.deepEqual(
    maxCostPerOp.evaluate(input({ ...v07("0.7"), verificationGasLimit: 200_000n }, [cap("c", ether(0.0012))])),
    passed,
  );
});
