// The stub's eligibility check alone: the cheapest completion of an operation, the property that makes a refusal on it
// safe (every completion the bundler could estimate costs at least as much, so the cap refuses each of them too), the
// memory-only rules run in order stopping at the first refusal, and a rule that would hold something is an error.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import { cheapestCompletion, checkEligibility } from "../../src/sponsorship/eligibility";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../../src/sponsorship/partialUserOperationV07";
import { pass, type Rule, type RuleInput, refuse } from "../../src/sponsorship/rule";
import { CHEAP_RULES } from "../../src/sponsorship/ruleList";
import { maxCostPerOp } from "../../src/sponsorship/rules/maxCostPerOp";
import type { SponsorshipSetup } from "../../src/sponsorship/setup";
import type { ReadablePolicy } from "../../src/storage/policies";
import { testPolicy } from "../helpers/policies";
import { versionOf } from "../helpers/versionOf";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const V06: PartialUserOperation = { sender: SENDER, nonce: 0n, initCode: "0x", callData: "0x", maxFeePerGas: 7n };
const V07: PartialUserOperationV07 = {
  entryPointVersion: "0.7",
  sender: SENDER,
  nonce: 0n,
  callData: "0x",
  paymasterVerificationGasLimit: 50_000n,
  paymasterPostOpGasLimit: 15_000n,
};

function setup(policies: ReadablePolicy[]): SponsorshipSetup {
  return {
    paymasterId: "pm",
    accountId: "account",
    chainId: 31337,
    fundingAddress: "0x00000000000000000000000000000000000f0f0f",
    policies,
    contracts: new Map(),
    webhooks: [],
  };
}

const input = (
  userOp: RuleInput["userOp"],
  policies: ReadablePolicy[] = [testPolicy("WALLET_DEPLOYMENT")],
): RuleInput => ({
  setup: setup(policies),
  userOp,
  version: versionOf(userOp),
  nowMs: 0,
  validUntil: 600,
});

describe("cheapestCompletion", () => {
  test("fields not sent count as zero; fields sent and everything else are kept", () => {
    assert.deepEqual(cheapestCompletion(V06), {
      ...V06,
      callGasLimit: 0n,
      verificationGasLimit: 0n,
      preVerificationGas: 0n,
      maxPriorityFeePerGas: 0n,
    });
    const v07 = cheapestCompletion({ ...V07, callGasLimit: 9n });
    assert.equal(v07.callGasLimit, 9n);
    assert.equal(v07.paymasterVerificationGasLimit, 50_000n, "our paymaster's limits stay as the stub gives them");
    assert.equal(v07.entryPointVersion, "0.7");
    assert.equal(versionOf(v07).worstCaseCostWei(v07), (9n + 50_000n + 15_000n) * 0n, "no fee sent: no cost yet");
  });

  test("every completion costs at least as much: a cap that refuses the cheapest refuses each of them", async () => {
    // A small deterministic generator, so that a failure names a reproducible case.
    let seed = 0x9e3779b9;
    const next = (bound: number) => {
      // xorshift32
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return BigInt((seed >>> 0) % bound);
    };
    const cap = testPolicy("MAX_COST_PER_OP", { threshold: 0.0001, thresholdType: "NATIVE_ASSET" });
    let refusedAtStub = 0;
    for (let i = 0; i < 300; i++) {
      const sent: PartialUserOperationV07 = {
        ...V07,
        ...(next(2) ? { callGasLimit: next(3_000_000) } : {}),
        ...(next(2) ? { verificationGasLimit: next(1_000_000) } : {}),
        ...(next(2) ? { maxFeePerGas: next(3_000_000_000) } : {}),
      };
      const cheapest = cheapestCompletion(sent);
      const complete = {
        ...sent,
        callGasLimit: sent.callGasLimit ?? next(3_000_000),
        verificationGasLimit: sent.verificationGasLimit ?? next(1_000_000),
        preVerificationGas: next(200_000),
        maxFeePerGas: sent.maxFeePerGas ?? next(3_000_000_000),
        maxPriorityFeePerGas: 0n,
      };
      assert.ok(versionOf(complete).worstCaseCostWei(complete) >= versionOf(cheapest).worstCaseCostWei(cheapest));
      assert.ok(versionOf(complete).depositChargeWei(complete) >= versionOf(cheapest).depositChargeWei(cheapest));
      const atStub = await maxCostPerOp.evaluate(input(cheapest, [cap]));
      if (!atStub.passed) {
        refusedAtStub++;
        assert.equal((await maxCostPerOp.evaluate(input(complete, [cap]))).passed, false, JSON.stringify(sent, String));
      }
    }
    assert.ok(refusedAtStub > 20, `the generator made too few refusals to mean anything (${refusedAtStub})`);
  });
});

describe("checkEligibility", () => {
  test("the memory-only rules in order, the first refusal with its rule's name", async () => {
    const deploying = { ...V06, initCode: "0x9406cc6185a346906296840746125a0e449764545fbfb9cf" as const };
    const refused = await checkEligibility(input(cheapestCompletion(deploying), [testPolicy("TIME_WINDOW")]), [
      ...CHEAP_RULES,
    ]);
    assert.equal(refused.eligible, false);
    assert.ok(!refused.eligible);
    assert.equal(refused.refusedBy, "walletDeployment");
    assert.deepEqual(
      refused.outcomes.map((outcome) => [outcome.rule, outcome.passed]),
      [
        ["fundingAndRules", true],
        ["walletDeployment", false],
      ],
    );

    const eligible = await checkEligibility(input(cheapestCompletion(V06)), CHEAP_RULES);
    assert.equal(eligible.eligible, true);
    assert.equal(eligible.outcomes.length, CHEAP_RULES.length);
  });

  test("a rule that would hold something is an error, and what it holds is let go", async () => {
    const events: string[] = [];
    const holding: Rule = {
      name: "holding",
      evaluate: () => ({
        ...pass("holding"),
        release: async () => {
          events.push("released");
        },
      }),
    };
    const never: Rule = { name: "never", evaluate: () => refuse("never", "not reached") };
    await assert.rejects(checkEligibility(input(V06), [holding, never]), /rule holding holds something/);
    assert.deepEqual(events, ["released"]);
  });
});
