// The arithmetic of spending limits, pure: which cycle an instant falls in, the cycle texts the limit update accepts,
// ether and wei both ways, an operation's worst-case cost, and how usage is written in messages.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import { CYCLE_UNITS } from "../../src/schemas/management/policyKinds";
import { MAX_FEE, MAX_GAS } from "../../src/sponsorship/partialUserOperation";
import {
  type CycleDuration,
  currentCycleStartMs,
  cycleLengthMs,
  etherToWei,
  formatUsage,
  parseCycleDurationText,
  type SpendingLimit,
  thresholdUnits,
  weiToEther,
} from "../../src/sponsorship/spendingLimit";

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** An anchor that is on no round hour: cycles follow it, not the clock. */
const ANCHOR = Date.UTC(2026, 0, 15, 12, 34, 56, 789);

describe("cycleLengthMs: the units that run back to back from the anchor", () => {
  const cases: { name: string; input: CycleDuration; expected: number }[] = [
    { name: "1 minute", input: { value: 1, unit: "minute" }, expected: 60_000 },
    { name: "90 minutes", input: { value: 90, unit: "minute" }, expected: 90 * 60_000 },
    { name: "1 hour", input: { value: 1, unit: "hour" }, expected: HOUR },
    { name: "3 hours", input: { value: 3, unit: "hour" }, expected: 3 * HOUR },
    { name: "1 day", input: { value: 1, unit: "day" }, expected: DAY },
    { name: "7 days", input: { value: 7, unit: "day" }, expected: 7 * DAY },
    { name: "24 hours is one day", input: { value: 24, unit: "hour" }, expected: DAY },
    {
      name: "100000 days (the largest value accepted)",
      input: { value: 100_000, unit: "day" },
      expected: 100_000 * DAY,
    },
  ];
  for (const { name, input, expected } of cases) {
    test(name, () => assert.equal(cycleLengthMs(ANCHOR, input, ANCHOR + 17), expected));
  }

  test("the units are exactly minute, hour, day, week and month", () =>
    assert.deepEqual([...CYCLE_UNITS], ["minute", "hour", "day", "week", "month"]));
});

describe("currentCycleStartMs", () => {
  const cases: { name: string; anchor: number; cycle: CycleDuration; now: number; expected: number }[] = [
    { name: "exactly at the anchor", anchor: ANCHOR, cycle: { value: 1, unit: "day" }, now: ANCHOR, expected: ANCHOR },
    {
      name: "one ms after the anchor",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR + 1,
      expected: ANCHOR,
    },
    {
      name: "one ms before the second cycle",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR + DAY - 1,
      expected: ANCHOR,
    },
    {
      name: "exactly at the second cycle's start",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR + DAY,
      expected: ANCHOR + DAY,
    },
    {
      name: "one ms into the second cycle",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR + DAY + 1,
      expected: ANCHOR + DAY,
    },
    {
      name: "1000 cycles later, mid-cycle",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR + 1000 * DAY + 12 * HOUR,
      expected: ANCHOR + 1000 * DAY,
    },
    {
      name: "3-hour cycles, 7 hours in: the third cycle",
      anchor: ANCHOR,
      cycle: { value: 3, unit: "hour" },
      now: ANCHOR + 7 * HOUR,
      expected: ANCHOR + 6 * HOUR,
    },
    {
      name: "3-hour cycles, one ms before 6 hours: the second cycle",
      anchor: ANCHOR,
      cycle: { value: 3, unit: "hour" },
      now: ANCHOR + 6 * HOUR - 1,
      expected: ANCHOR + 3 * HOUR,
    },
    {
      name: "1-hour cycles, 10000 hours and 1 ms later",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "hour" },
      now: ANCHOR + 10_000 * HOUR + 1,
      expected: ANCHOR + 10_000 * HOUR,
    },
    {
      name: "7-day cycles, 20 days later",
      anchor: ANCHOR,
      cycle: { value: 7, unit: "day" },
      now: ANCHOR + 20 * DAY,
      expected: ANCHOR + 14 * DAY,
    },
    {
      name: "24 hours and 1 day give the same cycles",
      anchor: ANCHOR,
      cycle: { value: 24, unit: "hour" },
      now: ANCHOR + 5 * DAY + 3,
      expected: ANCHOR + 5 * DAY,
    },
    {
      name: "100000-day cycles, 250000 days later: the third cycle",
      anchor: ANCHOR,
      cycle: { value: 100_000, unit: "day" },
      now: ANCHOR + 250_000 * DAY,
      expected: ANCHOR + 200_000 * DAY,
    },
    {
      name: "an anchor one ms in the future: the anchor itself",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "day" },
      now: ANCHOR - 1,
      expected: ANCHOR,
    },
    {
      name: "an anchor days in the future: the anchor itself, not a cycle before it",
      anchor: ANCHOR,
      cycle: { value: 1, unit: "hour" },
      now: ANCHOR - 3 * DAY - 17,
      expected: ANCHOR,
    },
    {
      name: "anchor 0 (a limit without one): cycles from the epoch",
      anchor: 0,
      cycle: { value: 1, unit: "day" },
      now: Date.UTC(2026, 2, 1, 23, 59, 59, 999),
      expected: Date.UTC(2026, 2, 1),
    },
  ];
  for (const { name, anchor, cycle, now, expected } of cases) {
    test(name, () => assert.equal(currentCycleStartMs(anchor, cycle, now), expected));
  }
});

describe("parseCycleDurationText", () => {
  const cases: { input: string; expected: CycleDuration | undefined }[] = [
    { input: "3 hour", expected: { value: 3, unit: "hour" } },
    { input: "3 hours", expected: { value: 3, unit: "hour" } },
    { input: "3h", expected: { value: 3, unit: "hour" } },
    { input: "3H", expected: { value: 3, unit: "hour" } },
    { input: "1 day", expected: { value: 1, unit: "day" } },
    { input: "2d", expected: { value: 2, unit: "day" } },
    { input: "2 Days", expected: { value: 2, unit: "day" } },
    { input: "  12   hours  ", expected: { value: 12, unit: "hour" } },
    { input: "10DAYS", expected: { value: 10, unit: "day" } },
    // A zero parses; the limit's validation refuses it (value from 1).
    { input: "0 h", expected: { value: 0, unit: "hour" } },
    { input: "", expected: undefined },
    { input: "hour", expected: undefined },
    { input: "3", expected: undefined },
    { input: "3 weeks", expected: { value: 3, unit: "week" } },
    { input: "1 week", expected: { value: 1, unit: "week" } },
    { input: "2w", expected: { value: 2, unit: "week" } },
    { input: "3 minutes", expected: { value: 3, unit: "minute" } },
    { input: "30 min", expected: { value: 30, unit: "minute" } },
    { input: "5MINS", expected: { value: 5, unit: "minute" } },
    { input: "1 month", expected: { value: 1, unit: "month" } },
    { input: "3 Months", expected: { value: 3, unit: "month" } },
    { input: "6mo", expected: { value: 6, unit: "month" } },
    // "m" alone could be a minute or a month: not accepted.
    { input: "3m", expected: undefined },
    { input: "3 hrs", expected: undefined },
    { input: "3 years", expected: undefined },
    { input: "3.5 hours", expected: undefined },
    { input: "-1 day", expected: undefined },
    { input: "1 day 2 hours", expected: undefined },
  ];
  for (const { input, expected } of cases) {
    test(`${JSON.stringify(input)} → ${expected ? `${expected.value} ${expected.unit}` : "not a cycle"}`, () =>
      assert.deepEqual(parseCycleDurationText(input), expected));
  }
});

describe("etherToWei: the number as written, not its binary neighbour", () => {
  const cases: { input: number; expected: bigint }[] = [
    { input: 1, expected: 10n ** 18n },
    { input: 0.05, expected: 5n * 10n ** 16n },
    { input: 0.1, expected: 10n ** 17n },
    { input: 123.456, expected: 123_456n * 10n ** 15n },
    { input: 0.30000000000000004, expected: 300_000_000_000_000_040n },
    { input: 1e-7, expected: 10n ** 11n },
    { input: 1.5e-10, expected: 150_000_000n },
    { input: 1e-18, expected: 1n },
    { input: 1.9e-18, expected: 1n },
    { input: 1e-19, expected: 0n },
    { input: 1e15, expected: 10n ** 33n },
    { input: 999_999_999_999_999.9, expected: 9_999_999_999_999_999n * 10n ** 17n },
  ];
  for (const { input, expected } of cases) {
    test(`${input} ETH → ${expected} wei`, () => assert.equal(etherToWei(input), expected));
  }
});

describe("weiToEther: every significant digit", () => {
  const cases: { input: bigint; expected: string }[] = [
    { input: 0n, expected: "0" },
    { input: 1n, expected: "0.000000000000000001" },
    { input: 10n ** 18n, expected: "1" },
    { input: 15n * 10n ** 17n, expected: "1.5" },
    { input: 5n * 10n ** 16n, expected: "0.05" },
    { input: 10n ** 18n + 1n, expected: "1.000000000000000001" },
    { input: 10n ** 33n, expected: "1000000000000000" },
    {
      input: 2n ** 256n - 1n,
      expected: "115792089237316195423570985008687907853269984665640564039457.584007913129639935",
    },
  ];
  for (const { input, expected } of cases)
    test(`${input} wei → ${expected}`, () => assert.equal(weiToEther(input), expected));

  test("a threshold written in plain decimals comes back as written", () => {
    for (const ether of [1, 0.05, 0.1, 123.456, 0.000001, 1.000000000000001]) {
      assert.equal(weiToEther(etherToWei(ether)), String(ether));
    }
  });
});

describe("worstCaseCostWei: (callGasLimit + 3 × verificationGasLimit + preVerificationGas) × maxFeePerGas", () => {
  const gas = { callGasLimit: 0n, verificationGasLimit: 0n, preVerificationGas: 0n, maxFeePerGas: 0n };
  const cases: { name: string; input: typeof gas; expected: bigint }[] = [
    { name: "nothing costs nothing", input: gas, expected: 0n },
    { name: "callGasLimit counts once", input: { ...gas, callGasLimit: 1n, maxFeePerGas: 7n }, expected: 7n },
    {
      name: "verificationGasLimit counts three times",
      input: { ...gas, verificationGasLimit: 1n, maxFeePerGas: 7n },
      expected: 21n,
    },
    {
      name: "preVerificationGas counts once",
      input: { ...gas, preVerificationGas: 1n, maxFeePerGas: 7n },
      expected: 7n,
    },
    { name: "no fee, no cost", input: { ...gas, callGasLimit: 100_000n }, expected: 0n },
    {
      name: "a typical operation",
      input: {
        callGasLimit: 100_000n,
        verificationGasLimit: 50_000n,
        preVerificationGas: 21_000n,
        maxFeePerGas: 2_000_000_000n,
      },
      expected: 271_000n * 2_000_000_000n,
    },
    {
      name: "the largest fields accepted, exactly",
      input: {
        callGasLimit: MAX_GAS,
        verificationGasLimit: MAX_GAS,
        preVerificationGas: MAX_GAS,
        maxFeePerGas: MAX_FEE,
      },
      expected: 5n * MAX_GAS * MAX_FEE,
    },
  ];
  for (const { name, input, expected } of cases) test(name, () => assert.equal(worstCaseCostWei(input), expected));
});

describe("thresholdUnits and formatUsage: operations for COUNT, wei and ether for NATIVE_ASSET", () => {
  const limit = (thresholdType: SpendingLimit["thresholdType"], threshold: number): SpendingLimit => ({
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    threshold,
    thresholdType,
  });
  const cases: { name: string; limit: SpendingLimit; units: bigint; usage: bigint; formatted: string }[] = [
    { name: "COUNT 5", limit: limit("COUNT", 5), units: 5n, usage: 3n, formatted: "3" },
    { name: "COUNT 1, nothing used", limit: limit("COUNT", 1), units: 1n, usage: 0n, formatted: "0" },
    {
      name: "NATIVE_ASSET 0.05",
      limit: limit("NATIVE_ASSET", 0.05),
      units: 5n * 10n ** 16n,
      usage: 10n ** 16n,
      formatted: "0.01",
    },
    {
      name: "NATIVE_ASSET 2, one wei used",
      limit: limit("NATIVE_ASSET", 2),
      units: 2n * 10n ** 18n,
      usage: 1n,
      formatted: "0.000000000000000001",
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      assert.equal(thresholdUnits(c.limit), c.units);
      assert.equal(formatUsage(c.limit, c.usage), c.formatted);
    });
  }
  test("a limit changed in place is converted again, not answered from the last conversion", () => {
    const changed = limit("NATIVE_ASSET", 1);
    assert.equal(thresholdUnits(changed), 10n ** 18n);
    changed.threshold = 3;
    assert.equal(thresholdUnits(changed), 3n * 10n ** 18n);
    changed.thresholdType = "COUNT";
    assert.equal(thresholdUnits(changed), 3n);
  });
});
