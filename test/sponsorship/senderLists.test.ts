// The SENDER_ALLOWLIST and SENDER_BLOCKLIST rule on every EntryPoint version: who passes, the exact refusal, several
// lists of a kind, a blocklist winning over an allowlist, case, and its place among CHEAP_RULES (a list whose settings cannot
// be read: unreadablePolicies.test.ts).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type Address, getAddress } from "viem";
import { decide } from "../../src/sponsorship/decide";
import type { SponsoredUserOperation } from "../../src/sponsorship/partialUserOperationV07";
import { CHEAP_RULES } from "../../src/sponsorship/ruleList";
import { senderLists, senderSetOf } from "../../src/sponsorship/rules/senderLists";
import type { ReadablePolicy } from "../../src/storage/policies";
import { testPolicy } from "../helpers/policies";
import { ruleInput } from "../helpers/ruleInput";

const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address;
const OTHER = "0x2222222222222222222222222222222222222222" as Address;
const THIRD = "0x3333333333333333333333333333333333333333" as Address;

const allow = (name: string, ...addresses: string[]) => testPolicy("SENDER_ALLOWLIST", { addresses }, name);
const block = (name: string, ...addresses: string[]) => testPolicy("SENDER_BLOCKLIST", { addresses }, name);

/** The sender as wallets send it (checksummed) in each version; the lists hold it in lower case. */
const opsOf = (sender: Address): [string, SponsoredUserOperation][] => [
  ["0.6", { sender: getAddress(sender), nonce: 0n, initCode: "0x", callData: "0x" }],
  ["0.7", { entryPointVersion: "0.7", sender: getAddress(sender), nonce: 0n, callData: "0x" }],
  ["0.8", { entryPointVersion: "0.8", sender: getAddress(sender), nonce: 0n, callData: "0x" }],
];

const input = (userOp: SponsoredUserOperation, policies: ReadablePolicy[]) => ruleInput(userOp, policies);

const passed = { rule: "senderLists", passed: true };
const refused = (reason: string) => ({ rule: "senderLists", passed: false, reason });

for (const [version, op] of opsOf(SENDER)) {
  describe(`senderLists on an EntryPoint v${version} operation`, () => {
    const cases: { name: string; policies: ReadablePolicy[]; expected: unknown }[] = [
      { name: "no list: passes", policies: [], expected: passed },
      { name: "on the allowlist: passes", policies: [allow("vips", OTHER, SENDER)], expected: passed },
      {
        name: "not on the allowlist: refused, naming the sender and the list",
        policies: [allow("vips", OTHER, THIRD)],
        expected: refused(`Sender ${SENDER} is not on the allowlist "vips"`),
      },
      {
        name: "an empty allowlist: nobody passes",
        policies: [allow("nobody")],
        expected: refused(`Sender ${SENDER} is not on the allowlist "nobody"`),
      },
      {
        name: "on the blocklist: refused, naming the sender and the list",
        policies: [block("abusers", THIRD, SENDER)],
        expected: refused(`Sender ${SENDER} is on the blocklist "abusers"`),
      },
      { name: "not on the blocklist: passes", policies: [block("abusers", OTHER)], expected: passed },
      { name: "an empty blocklist: passes", policies: [block("none")], expected: passed },
      {
        name: "on an allowlist and a blocklist: the blocklist wins",
        policies: [allow("vips", SENDER), block("abusers", SENDER)],
        expected: refused(`Sender ${SENDER} is on the blocklist "abusers"`),
      },
      {
        name: "several allowlists: the sender must be on each",
        policies: [allow("a", SENDER, OTHER), allow("b", OTHER)],
        expected: refused(`Sender ${SENDER} is not on the allowlist "b"`),
      },
      { name: "on every allowlist: passes", policies: [allow("a", SENDER), allow("b", SENDER)], expected: passed },
      {
        name: "several blocklists: on any one is refused",
        policies: [block("a", OTHER), block("b", SENDER)],
        expected: refused(`Sender ${SENDER} is on the blocklist "b"`),
      },
      {
        name: "stored in mixed case: still compared in lower case",
        policies: [block("abusers", getAddress(SENDER))],
        expected: refused(`Sender ${SENDER} is on the blocklist "abusers"`),
      },
      {
        name: "other kinds of rule are not lists",
        policies: [testPolicy("TIME_WINDOW")],
        expected: passed,
      },
    ];
    for (const { name, policies, expected } of cases) {
      test(name, () => {
        assert.deepEqual(senderLists.evaluate(input(op, policies)), expected);
      });
    }
  });
}

test("the set is built once per rule object and reused: a lookup, not a scan of the list", () => {
  const addresses = Array.from({ length: 1000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
  const policy = allow("big", ...addresses);
  const first = senderSetOf(policy);
  assert.equal(first.size, 1000);
  assert.equal(senderSetOf(policy), first, "the same set on the next call");
  // A rule object read again (a new setup load) gets its own set.
  assert.notEqual(senderSetOf({ ...policy }), first);
});

test("runs among CHEAP_RULES, after the time window, and writes nothing", async () => {
  const names = CHEAP_RULES.map((rule) => rule.name);
  assert.deepEqual(names.slice(-2), ["timeWindow", "senderLists"]);
  const [, op] = opsOf(SENDER)[1] as [string, SponsoredUserOperation];
  const decision = await decide(input(op, [block("abusers", SENDER)]), CHEAP_RULES);
  assert.deepEqual(decision.sponsored ? undefined : decision.reason, `Sender ${SENDER} is on the blocklist "abusers"`);
  const allowed = await decide(input(op, [allow("vips", SENDER)]), CHEAP_RULES);
  assert.equal(allowed.sponsored, true);
  assert.equal(allowed.sponsored && allowed.claim, undefined, "no reservation");
});
