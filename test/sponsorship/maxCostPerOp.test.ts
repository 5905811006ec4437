// The per-operation cost cap (MAX_COST_PER_OP) on operations of every EntryPoint version: the worst case it compares,
// the edge at exactly the cap and several caps (a cap whose settings cannot be read: unreadablePolicies.test.ts); a USD cap at a price (exact,
// the cost rounded up) and its refusal without a usable price.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import type { PriceReading } from "../../src/chain/nativeUsdPrice";
import type { StoredPolicyData } from "../../src/schemas/management/policies";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07, SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import { maxCostPerOp } from "../../src/sponsorship/rules/maxCostPerOp";
import { RequestPrice } from "../../src/sponsorship/usdAmount";
import type { ReadablePolicy } from "../../src/storage/policies";
import { testPolicy } from "../helpers/policies";
import { ruleInput } from "../helpers/ruleInput";

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

const cap = (name: string, policyData: StoredPolicyData["MAX_COST_PER_OP"]) =>
  testPolicy("MAX_COST_PER_OP", policyData, name);
const ether = (threshold: number) => ({ threshold, thresholdType: "NATIVE_ASSET" as const });

/** 2,000 dollars per ether (a feed's 8 decimals): the 0.001-ether worst case is 2 dollars. */
const AT_2000: PriceReading = { ok: true, price: { answer: 2_000n * 10n ** 8n, decimals: 8 } };
const dollars = (threshold: number) => ({ threshold, thresholdType: "USD" as const });

const input = (userOp: SponsoredUserOperation, policies: ReadablePolicy[], reading: PriceReading = AT_2000) =>
  ruleInput(userOp, policies, { nativeUsdPrice: new RequestPrice({ read: async () => reading }, 31337, 0) });

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
    const cases: { name: string; policies: ReadablePolicy[]; expected: unknown }[] = [
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
        name: "a USD cap exactly at the worst case (2 dollars): passes",
        policies: [cap("usd", dollars(2))],
        expected: passed,
      },
      {
        name: "a USD cap one 10^-18 dollar below: refused with dollars, ether and the price",
        policies: [cap("usd", dollars(1.999999999999999))],
        expected: {
          rule: "maxCostPerOp",
          passed: false,
          reason:
            'Cost cap "usd" exceeded: this operation may cost up to 2 USD (0.001 ETH at 2000 USD), above the cap of ' +
            "1.999999999999999 USD per operation",
        },
      },
      {
        name: "other rule kinds are not caps",
        policies: [testPolicy("PAYMASTER_SA_LIMIT")],
        expected: passed,
      },
    ];
    for (const { name, policies, expected } of cases) {
      test(name, async () => assert.deepEqual(await maxCostPerOp.evaluate(input(op, policies)), expected));
    }
  });
}

test("v0.6 counts the verification limit three times, v0.7 the paymaster's own limits: different worst cases", async () => {
  const moreVerification = { ...V06, verificationGasLimit: 200_000n };
  // v0.6: (100k + 600k + 100k) × 2 gwei = 0.0016 ether; the same change on v0.7 adds only 100k × 2 gwei.
  assert.deepEqual(
    await maxCostPerOp.evaluate(input(moreVerification, [cap("c", ether(0.0012))])),
    over("c", "0.0016", "0.0012"),
  );
  assert.deepEqual(
    await maxCostPerOp.evaluate(input({ ...v07("0.7"), verificationGasLimit: 200_000n }, [cap("c", ether(0.0012))])),
    passed,
  );
});

describe("a USD cap without a usable price refuses (fail-closed), on every EntryPoint version", () => {
  for (const [version, op] of [
    ["0.6", V06],
    ["0.7", v07("0.7")],
    ["0.8", v07("0.8")],
  ] as const) {
    test(`v${version}: a stale price is no price; the reason says why`, async () => {
      const stale: PriceReading = { ok: false, reason: "The native token price is stale: …" };
      assert.deepEqual(await maxCostPerOp.evaluate(input(op, [cap("usd", dollars(100))], stale)), {
        rule: "maxCostPerOp",
        passed: false,
        reason: 'Cost cap "usd" (USD) cannot be checked: The native token price is stale: …',
      });
    });
  }
  test("no price source for the request at all: refused", async () => {
    const { nativeUsdPrice: _none, ...withoutPrice } = input(V06, [cap("usd", dollars(100))]);
    assert.deepEqual(await maxCostPerOp.evaluate(withoutPrice), {
      rule: "maxCostPerOp",
      passed: false,
      reason: 'Cost cap "usd" (USD) cannot be checked: No native token price is available',
    });
  });
  test("an ether cap needs no price: a missing one does not matter", async () => {
    const refused: PriceReading = { ok: false, reason: "none" };
    assert.deepEqual(await maxCostPerOp.evaluate(input(V06, [cap("eth", ether(0.001))], refused)), passed);
  });
});
