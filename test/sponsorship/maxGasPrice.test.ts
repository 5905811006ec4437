// The gas-price cap (MAX_GAS_PRICE) on operations of every EntryPoint version: the edge at exactly the cap, decimals
// of a gwei, the optional priority-fee cap, several caps, and the stub's cheapest completion (fees not sent yet).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import type { StoredPolicyData } from "../../src/schemas/management/policies";
import { cheapestCompletion } from "../../src/sponsorship/eligibility";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07, SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import { maxGasPrice } from "../../src/sponsorship/rules/maxGasPrice";
import type { ReadablePolicy } from "../../src/storage/policies";
import { testPolicy } from "../helpers/policies";
import { ruleInput } from "../helpers/ruleInput";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const GWEI = 10n ** 9n;

const v06 = (maxFeePerGas: bigint, maxPriorityFeePerGas: bigint): PartialUserOperation => ({
  sender: SENDER,
  nonce: 0n,
  initCode: "0x",
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas,
  maxPriorityFeePerGas,
});
const v07 = (entryPointVersion: "0.7" | "0.8", maxFeePerGas: bigint): PartialUserOperationV07 => ({
  entryPointVersion,
  sender: SENDER,
  nonce: 0n,
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 100_000n,
  preVerificationGas: 100_000n,
  maxFeePerGas,
  maxPriorityFeePerGas: GWEI,
});

const cap = (name: string, policyData: StoredPolicyData["MAX_GAS_PRICE"]) =>
  testPolicy("MAX_GAS_PRICE", policyData, name);

const input = (userOp: SponsoredUserOperation, policies: ReadablePolicy[]) => ruleInput(userOp, policies);

const outcome = async (userOp: SponsoredUserOperation, policies: ReadablePolicy[]) =>
  maxGasPrice.evaluate(input(userOp, policies));

describe("maxFeePerGas against the cap", () => {
  const versions: [string, (fee: bigint) => SponsoredUserOperation][] = [
    ["v0.6", (fee) => v06(fee, GWEI)],
    ["v0.7", (fee) => v07("0.7", fee)],
    ["v0.8", (fee) => v07("0.8", fee)],
  ];
  for (const [version, op] of versions) {
    test(`${version}: exactly at the cap passes, one wei above is refused with both figures`, async () => {
      const spike = cap("spike guard", { maxFeePerGasGwei: 50 });
      assert.deepEqual(await outcome(op(50n * GWEI), [spike]), { rule: "maxGasPrice", passed: true });
      assert.deepEqual(await outcome(op(50n * GWEI + 1n), [spike]), {
        rule: "maxGasPrice",
        passed: false,
        reason: 'Gas price cap "spike guard" exceeded: maxFeePerGas is 50.000000001 gwei, above the cap of 50 gwei',
      });
    });
  }

  test("a cap in decimals of a gwei is exact (0.05 gwei is 50,000,000 wei, 1e-7 gwei is 100 wei)", async () => {
    const l2 = cap("l2", { maxFeePerGasGwei: 0.05 });
    assert.equal((await outcome(v06(50_000_000n, 0n), [l2])).passed, true);
    assert.equal((await outcome(v06(50_000_001n, 0n), [l2])).reason?.includes("0.050000001 gwei"), true);
    const tiny = cap("tiny", { maxFeePerGasGwei: 1e-7 });
    assert.equal((await outcome(v06(100n, 0n), [tiny])).passed, true);
    assert.equal(
      (await outcome(v06(101n, 0n), [tiny])).reason,
      'Gas price cap "tiny" exceeded: maxFeePerGas is 0.000000101 gwei, above the cap of 0.0000001 gwei',
    );
  });
});

test("the priority fee is capped only when the rule names a cap for it", async () => {
  const feeOnly = cap("fee only", { maxFeePerGasGwei: 100 });
  assert.equal((await outcome(v06(10n * GWEI, 90n * GWEI), [feeOnly])).passed, true);
  const both = cap("both", { maxFeePerGasGwei: 100, maxPriorityFeePerGasGwei: 2.5 });
  assert.equal((await outcome(v06(10n * GWEI, 2_500_000_000n), [both])).passed, true);
  assert.deepEqual(await outcome(v06(10n * GWEI, 3n * GWEI), [both]), {
    rule: "maxGasPrice",
    passed: false,
    reason: 'Gas price cap "both" exceeded: maxPriorityFeePerGas is 3 gwei, above the cap of 2.5 gwei',
  });
});

test("with several caps the first one exceeded refuses, and no cap at all passes", async () => {
  const loose = cap("loose", { maxFeePerGasGwei: 100 });
  const tight = cap("tight", { maxFeePerGasGwei: 20 });
  const refused = await outcome(v06(30n * GWEI, GWEI), [loose, tight]);
  assert.match(refused.reason ?? "", /^Gas price cap "tight" exceeded: maxFeePerGas is 30 gwei, above the cap of 20/);
  assert.deepEqual(await outcome(v06(10n ** 20n, GWEI), []), { rule: "maxGasPrice", passed: true });
});

test("at the stub, fees not sent yet count as zero: passed now, decided on the final request's fees", async () => {
  const { maxFeePerGas: _, maxPriorityFeePerGas: __, ...noFees } = v06(0n, 0n);
  const spike = cap("spike guard", { maxFeePerGasGwei: 1 });
  assert.equal((await outcome(cheapestCompletion(noFees), [spike])).passed, true);
  assert.equal((await outcome(cheapestCompletion(v06(2n * GWEI, 0n)), [spike])).passed, false);
});
