// decide(): rules in order, the first refusal ends the evaluation, reservations given back latest first, afterRecord
// and the one claim passed on. The rules here record every call made to them, so "not evaluated" is seen, not assumed.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Address } from "viem";
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import { type Decision, decide } from "../../src/sponsorship/decide";
import type { Rule, RuleInput, RuleResult } from "../../src/sponsorship/rule";
import { CHEAP_RULES } from "../../src/sponsorship/ruleList";
import { NO_FUNDING_WALLET_REASON } from "../../src/sponsorship/rules/fundingAndRules";
import type { LimitClaim } from "../../src/storage/sponsorships";

const INPUT: RuleInput = {
  setup: {
    paymasterId: "pm",
    accountId: "account",
    chainId: 31337,
    fundingAddress: "0x00000000000000000000000000000000000f0f0f",
    policies: [],
    contracts: new Map(),
    webhooks: [],
  },
  userOp: {
    sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address,
    nonce: 0n,
    initCode: "0x",
    callData: "0x",
  },
  version: ENTRY_POINT_VERSIONS["0.6"],
  nowMs: 1_700_000_000_000,
  validUntil: 1_700_000_300,
};

const claimOf = (rule: string): LimitClaim => ({ rule, reservations: [], refusal: () => `${rule} full` });

/** How a recorded rule answers. */
type Behaviour =
  | "pass"
  | "passAsync"
  | "passReserving"
  | "passAfterRecord"
  | "passClaiming"
  | "refuse"
  | "refuseAsync"
  | "refuseWithoutReason"
  | "refuseReserving"
  | "throw"
  | "reject";

/** Rules that write every call made to them into `log`: evaluate, release, afterRecord. */
function recordedRules(behaviours: [string, Behaviour][]): { rules: Rule[]; log: string[] } {
  const log: string[] = [];
  const release = (name: string) => async () => {
    log.push(`release ${name}`);
  };
  const answer = (name: string, behaviour: Behaviour): RuleResult | Promise<RuleResult> => {
    switch (behaviour) {
      case "pass":
        return { rule: name, passed: true };
      case "passAsync":
        return Promise.resolve({ rule: name, passed: true });
      case "passReserving":
        return { rule: name, passed: true, release: release(name) };
      case "passAfterRecord":
        return { rule: name, passed: true, afterRecord: (recorded) => log.push(`afterRecord ${name} ${recorded}`) };
      case "passClaiming":
        return { rule: name, passed: true, claim: claimOf(name) };
      case "refuse":
        return { rule: name, passed: false, reason: `${name} says no` };
      case "refuseAsync":
        return Promise.resolve({ rule: name, passed: false, reason: `${name} says no` });
      case "refuseWithoutReason":
        return { rule: name, passed: false };
      case "refuseReserving":
        return { rule: name, passed: false, reason: `${name} says no`, release: release(name) };
      case "throw":
        throw new Error(`${name} crashed`);
      case "reject":
        return Promise.reject(new Error(`${name} crashed`));
    }
  };
  const rules = behaviours.map(
    ([name, behaviour]): Rule => ({
      name,
      evaluate(input) {
        assert.equal(input, INPUT, "every rule sees the input as given");
        log.push(`evaluate ${name}`);
        return answer(name, behaviour);
      },
    }),
  );
  return { rules, log };
}

/** The decision without its afterRecord function, which deepEqual cannot compare. */
function plain(decision: Decision): unknown {
  if (!decision.sponsored) return decision;
  const { afterRecord, ...rest } = decision;
  assert.equal(typeof afterRecord, "function");
  return rest;
}

const ok = (rule: string) => ({ rule, passed: true });
const no = (rule: string, reason = `${rule} says no`) => ({ rule, passed: false, reason });

describe("order: the first refusal ends the evaluation", () => {
  const cases: { name: string; rules: [string, Behaviour][]; expected: unknown; log: string[] }[] = [
    {
      name: "no rules: sponsored, no outcome",
      rules: [],
      expected: { sponsored: true, outcomes: [] },
      log: [],
    },
    {
      name: "all pass: sponsored, every outcome in order",
      rules: [
        ["a", "pass"],
        ["b", "passAsync"],
        ["c", "pass"],
      ],
      expected: { sponsored: true, outcomes: [ok("a"), ok("b"), ok("c")] },
      log: ["evaluate a", "evaluate b", "evaluate c"],
    },
    {
      name: "the first refuses: nothing after it is evaluated",
      rules: [
        ["a", "refuse"],
        ["b", "pass"],
        ["c", "refuse"],
      ],
      expected: { sponsored: false, reason: "a says no", outcomes: [no("a")] },
      log: ["evaluate a"],
    },
    {
      name: "the second refuses: the third is not evaluated",
      rules: [
        ["a", "pass"],
        ["b", "refuseAsync"],
        ["c", "pass"],
      ],
      expected: { sponsored: false, reason: "b says no", outcomes: [ok("a"), no("b")] },
      log: ["evaluate a", "evaluate b"],
    },
    {
      name: "the last refuses",
      rules: [
        ["a", "pass"],
        ["b", "pass"],
        ["c", "refuse"],
      ],
      expected: { sponsored: false, reason: "c says no", outcomes: [ok("a"), ok("b"), no("c")] },
      log: ["evaluate a", "evaluate b", "evaluate c"],
    },
    {
      name: "a refusal without a reason: the rule's name is the reason",
      rules: [
        ["a", "pass"],
        ["silent", "refuseWithoutReason"],
        ["c", "pass"],
      ],
      expected: { sponsored: false, reason: "silent", outcomes: [ok("a"), { rule: "silent", passed: false }] },
      log: ["evaluate a", "evaluate silent"],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { rules, log } = recordedRules(c.rules);
      assert.deepEqual(plain(await decide(INPUT, rules)), c.expected);
      assert.deepEqual(log, c.log);
    });
  }

  for (const failure of ["throw", "reject"] as const) {
    test(`a rule that fails (${failure}): decide rejects with its error, later rules not evaluated`, async () => {
      const { rules, log } = recordedRules([
        ["a", "pass"],
        ["b", failure],
        ["c", "pass"],
      ]);
      await assert.rejects(decide(INPUT, rules), { name: "Error", message: "b crashed" });
      assert.deepEqual(log, ["evaluate a", "evaluate b"]);
    });
  }
});

describe("reservations: given back latest first when the operation is not sponsored", () => {
  const cases: { name: string; rules: [string, Behaviour][]; rejects?: string; log: string[] }[] = [
    {
      name: "a later refusal releases every reservation before it, latest first",
      rules: [
        ["a", "passReserving"],
        ["b", "pass"],
        ["c", "passReserving"],
        ["d", "refuse"],
        ["e", "passReserving"],
      ],
      log: ["evaluate a", "evaluate b", "evaluate c", "evaluate d", "release c", "release a"],
    },
    {
      name: "a failure releases them the same way, then rejects",
      rules: [
        ["a", "passReserving"],
        ["c", "passReserving"],
        ["d", "throw"],
      ],
      rejects: "d crashed",
      log: ["evaluate a", "evaluate c", "evaluate d", "release c", "release a"],
    },
    {
      name: "sponsored: nothing is released",
      rules: [
        ["a", "passReserving"],
        ["c", "passReserving"],
      ],
      log: ["evaluate a", "evaluate c"],
    },
    {
      name: "the refusing rule's own release is not called (a refusal reserves nothing)",
      rules: [
        ["a", "passReserving"],
        ["b", "refuseReserving"],
      ],
      log: ["evaluate a", "evaluate b", "release a"],
    },
    {
      name: "a refusal does not call afterRecord of the rules that passed",
      rules: [
        ["a", "passAfterRecord"],
        ["b", "refuse"],
      ],
      log: ["evaluate a", "evaluate b"],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { rules, log } = recordedRules(c.rules);
      if (c.rejects) await assert.rejects(decide(INPUT, rules), { message: c.rejects });
      else await decide(INPUT, rules);
      assert.deepEqual(log, c.log);
    });
  }

  // Found while writing these tests: releaseAll reversed the list in place, so when a release failed on a refusal, the
  // catch block released again from the other end: the failed release was called a second time and the order lost.
  test("a release that fails: every other reservation is still released, and each release is called once", async () => {
    const log: string[] = [];
    const reserving = (name: string, fails = false): Rule => ({
      name,
      evaluate: () => ({
        rule: name,
        passed: true,
        release: async () => {
          log.push(`release ${name}`);
          if (fails) throw new Error(`release ${name} failed`);
        },
      }),
    });
    const veto: Rule = { name: "veto", evaluate: () => ({ rule: "veto", passed: false, reason: "no" }) };
    await assert.rejects(decide(INPUT, [reserving("a"), reserving("b", true), veto]), /release b failed/);
    assert.deepEqual(log, ["release b", "release a"]);
  });
});

describe("afterRecord and the claim of a sponsored decision", () => {
  for (const recorded of [true, false]) {
    test(`afterRecord(${recorded}) reaches every rule's afterRecord, in rule order, and only when called`, async () => {
      const { rules, log } = recordedRules([
        ["a", "passAfterRecord"],
        ["b", "pass"],
        ["c", "passAfterRecord"],
      ]);
      const decision = await decide(INPUT, rules);
      assert.ok(decision.sponsored);
      assert.deepEqual(log, ["evaluate a", "evaluate b", "evaluate c"]);
      decision.afterRecord(recorded);
      assert.deepEqual(log.slice(3), [`afterRecord a ${recorded}`, `afterRecord c ${recorded}`]);
    });
  }

  test("one rule's claim is the decision's; outcomes carry no release, afterRecord or claim", async () => {
    const { rules } = recordedRules([
      ["a", "passReserving"],
      ["limits", "passClaiming"],
      ["c", "passAfterRecord"],
    ]);
    const decision = await decide(INPUT, rules);
    assert.ok(decision.sponsored);
    assert.equal(decision.claim?.rule, "limits");
    assert.equal(decision.claim?.refusal(0, 0n), "limits full");
    assert.deepEqual(decision.outcomes, [ok("a"), ok("limits"), ok("c")]);
  });

  test("no claim: the decision has no claim key", async () => {
    const decision = await decide(INPUT, recordedRules([["a", "pass"]]).rules);
    assert.ok(decision.sponsored);
    assert.equal("claim" in decision, false);
  });

  test("two rules that claim: a programming error, reservations released, later rules not evaluated", async () => {
    const { rules, log } = recordedRules([
      ["a", "passReserving"],
      ["limits", "passClaiming"],
      ["second", "passClaiming"],
      ["d", "pass"],
    ]);
    await assert.rejects(decide(INPUT, rules), { message: "rules limits and second both claim reservations" });
    assert.deepEqual(log, ["evaluate a", "evaluate limits", "evaluate second", "release a"]);
  });

  test("a claim before a refusal is dropped with the refusal", async () => {
    const { rules } = recordedRules([
      ["limits", "passClaiming"],
      ["b", "refuse"],
    ]);
    assert.deepEqual(await decide(INPUT, rules), {
      sponsored: false,
      reason: "b says no",
      outcomes: [ok("limits"), no("b")],
    });
  });
});

describe("CHEAP_RULES", () => {
  test("are rules 1 to 6 (4 holds both caps), in the documented order", () => {
    assert.deepEqual(
      CHEAP_RULES.map((rule) => rule.name),
      [
        "fundingAndRules",
        "walletDeployment",
        "contractWhitelist",
        "maxCostPerOp",
        "maxGasPrice",
        "timeWindow",
        "senderLists",
      ],
    );
  });

  test("an operation every cheap rule would refuse is refused by the first, and the rules after it never run", async () => {
    const { rules, log } = recordedRules([["later", "pass"]]);
    const input: RuleInput = {
      ...INPUT,
      setup: { ...INPUT.setup, fundingAddress: null, contracts: new Map([["0x01", new Set<string>()]]) },
      userOp: { ...INPUT.userOp, initCode: "0x1234", callData: "0xdeadbeef" },
    };
    assert.deepEqual(await decide(input, [...CHEAP_RULES, ...rules]), {
      sponsored: false,
      reason: NO_FUNDING_WALLET_REASON,
      outcomes: [no("fundingAndRules", NO_FUNDING_WALLET_REASON)],
    });
    assert.deepEqual(log, []);
  });

  test("with a funding wallet and a whitelist: rule 2 refuses the deployment before rule 3 reads callData", async () => {
    const input: RuleInput = {
      ...INPUT,
      setup: { ...INPUT.setup, contracts: new Map([["0x01", new Set<string>()]]) },
      userOp: { ...INPUT.userOp, initCode: "0x1234", callData: "0xdeadbeef" },
    };
    const decision = await decide(input, CHEAP_RULES);
    assert.ok(!decision.sponsored);
    assert.deepEqual(
      decision.outcomes.map((o) => [o.rule, o.passed]),
      [
        ["fundingAndRules", true],
        ["walletDeployment", false],
      ],
    );
    assert.match(decision.reason, /^Wallet deployment is not sponsored/);
  });
});
