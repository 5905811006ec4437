// The execution-gas arithmetic of gasEstimationSimulationV07.ts (executionGasV07.ts) against the EntryPoints' own
// charging, written out here as the EntryPoint.sol files do it: what any `used`, post-execution gas and callGasLimit
// would be charged, and whether the inverse finds `used` again.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  executionGasV08,
  largestPenalisedUse,
  PENALTY_FREE_GAS,
  unusedGasPenalty,
} from "../../src/gasEstimation/executionGasV07";

const CALL_GAS = 10_000_000n;

/** A small deterministic generator, so a failure names values that can be run again. */
function* samples(count: number): Generator<[used: bigint, after: bigint]> {
  let seed = 12345n;
  const next = (bound: bigint) => {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    return seed % bound;
  };
  for (let i = 0; i < count; i++) yield [next(3_000_000n), next(120_000n)];
  yield [0n, 0n];
  yield [21_000n, 0n];
  yield [100_000n, 36_000n];
  yield [100_000n, 36_001n];
}

test("the penalty as each version charges it: v0.7 always, v0.8 and v0.9 past 40,000 unused", () => {
  assert.equal(unusedGasPenalty("0.7", 90_000n, 100_000n), 1_000n);
  assert.equal(unusedGasPenalty("0.7", 99_995n, 100_000n), 0n);
  assert.equal(unusedGasPenalty("0.8", 60_000n, 100_000n), 0n);
  assert.equal(unusedGasPenalty("0.9", 59_999n, 100_000n), 4_000n);
  assert.equal(unusedGasPenalty("0.8", 120_000n, 100_000n), 0n);
});

test("v0.7: one reading gives everything used after validation, to one gas, never less", () => {
  const limit = CALL_GAS + 45_000n;
  for (const [used] of samples(2_000)) {
    const charged = used + unusedGasPenalty("0.7", used, limit);
    const found = largestPenalisedUse(charged, limit);
    assert.ok(found === used || found === used + 1n, `used ${used}, found ${found}`);
  }
});

test("v0.8 and v0.9: further readings give the gas the penalty weighs, to ten gas, never less", async () => {
  for (const [used, after] of samples(2_000)) {
    const charge = (callGasLimit: bigint) => used + after + unusedGasPenalty("0.8", used, callGasLimit);
    const readings: bigint[] = [];
    const found = await executionGasV08({ callGasLimit: CALL_GAS, charged: charge(CALL_GAS) }, async (callGasLimit) => {
      // The call always has at least what it used.
      assert.ok(callGasLimit >= used, `reading at ${callGasLimit} below ${used}`);
      readings.push(callGasLimit);
      return charge(callGasLimit);
    });
    assert.ok(found >= used, `used ${used} (after ${after}): found ${found}`);
    // Three further readings reach 40,000 each below the first bound (used + about 1.11 × after).
    if (after < 100_000n) assert.ok(found - used < 10n, `used ${used} (after ${after}): found ${found}`);
    assert.ok(readings.length <= 3);
  }
});

test("v0.8 and v0.9: a reading that fits neither case leaves the safe bound", async () => {
  const used = 50_000n;
  const after = 3_000n;
  const first = { callGasLimit: CALL_GAS, charged: used + after + unusedGasPenalty("0.8", used, CALL_GAS) };
  const bound = largestPenalisedUse(first.charged, CALL_GAS);
  // The call ran out of gas with less: it used all it was given, so the second reading charges more than it should.
  const found = await executionGasV08(first, async (callGasLimit) => callGasLimit + 500n + after);
  assert.equal(found, bound);
  assert.ok(bound >= used && bound - used < PENALTY_FREE_GAS);
});
