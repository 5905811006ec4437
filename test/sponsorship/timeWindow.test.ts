// The TIME_WINDOW rule at the decision's clock: start included, end excluded, open-ended windows, several windows,
// every EntryPoint version alike (a window whose settings cannot be read: unreadablePolicies.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import type { StoredPolicyData } from "../../src/schemas/management/policies";
import type { SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import { timeWindow } from "../../src/sponsorship/rules/timeWindow";
import type { ReadablePolicy } from "../../src/storage/policies";
import { testPolicy } from "../helpers/policies";
import { ruleInput } from "../helpers/ruleInput";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const START = Date.UTC(2027, 0, 1); // 1798761600000
const END = Date.UTC(2027, 1, 1); // 1801440000000

const window = (name: string, policyData: StoredPolicyData["TIME_WINDOW"]) =>
  testPolicy("TIME_WINDOW", policyData, name);

const OPS: [string, SponsoredUserOperation][] = [
  ["0.6", { sender: SENDER, nonce: 0n, initCode: "0x", callData: "0x" }],
  ["0.7", { entryPointVersion: "0.7", sender: SENDER, nonce: 0n, callData: "0x" }],
  ["0.8", { entryPointVersion: "0.8", sender: SENDER, nonce: 0n, callData: "0x" }],
];

const input = (userOp: SponsoredUserOperation, policies: ReadablePolicy[], nowMs: number) =>
  ruleInput(userOp, policies, { nowMs });

const passed = { rule: "timeWindow", passed: true };
const refused = (reason: string) => ({ rule: "timeWindow", passed: false, reason });
const launch = window("launch", { startTimeInEpoch: START, endTimeInEpoch: END });

for (const [version, op] of OPS) {
  describe(`timeWindow on an EntryPoint v${version} operation`, () => {
    const cases: { name: string; policies: ReadablePolicy[]; nowMs: number; expected: unknown }[] = [
      { name: "no window: passes at any time", policies: [], nowMs: 0, expected: passed },
      {
        name: "one ms before the start: refused, saying when it opens",
        policies: [launch],
        nowMs: START - 1,
        expected: refused(
          `Sponsorship window "launch" opens at 2027-01-01T00:00:00.000Z (${START}); it is now 2026-12-31T23:59:59.999Z`,
        ),
      },
      { name: "at the start: passes", policies: [launch], nowMs: START, expected: passed },
      { name: "one ms before the end: passes", policies: [launch], nowMs: END - 1, expected: passed },
      {
        name: "at the end: refused, saying when it closed",
        policies: [launch],
        nowMs: END,
        expected: refused(
          `Sponsorship window "launch" closed at 2027-02-01T00:00:00.000Z (${END}); it is now 2027-02-01T00:00:00.000Z`,
        ),
      },
      {
        name: "only a start: open for ever after",
        policies: [window("from", { startTimeInEpoch: START })],
        nowMs: END * 2,
        expected: passed,
      },
      {
        name: "only an end: open from the beginning",
        policies: [window("until", { endTimeInEpoch: END })],
        nowMs: 0,
        expected: passed,
      },
      {
        name: "two windows: both must hold; the one that does not is named",
        policies: [window("from", { startTimeInEpoch: START }), window("until", { endTimeInEpoch: START + 10 })],
        nowMs: START + 10,
        expected: refused(
          `Sponsorship window "until" closed at 2027-01-01T00:00:00.010Z (${START + 10}); it is now 2027-01-01T00:00:00.010Z`,
        ),
      },
      {
        name: "other rule kinds are not windows",
        policies: [testPolicy("WEBHOOK")],
        nowMs: 0,
        expected: passed,
      },
    ];
    for (const { name, policies, nowMs, expected } of cases) {
      test(name, () => assert.deepEqual(timeWindow.evaluate(input(op, policies, nowMs)), expected));
    }
  });
}
