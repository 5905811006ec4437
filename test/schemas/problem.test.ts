import assert from "node:assert/strict";
import { test } from "node:test";
import Type from "typebox";
import { AddressField, absentIsProblem, Text, withMessage, withProblem } from "../../src/schemas/management/common";
import { CreatePolicyBody, CycleDuration } from "../../src/schemas/management/policies";
import { problemOf } from "../../src/schemas/validate";

/** The sentence a refused value gets: the field's name and what is wrong, the first wrong field in schema order. */
const Body = Type.Object({
  name: Text(10),
  count: Type.Integer({ minimum: 1 }),
  tags: Type.Optional(Type.Array(absentIsProblem(Type.String()))),
  flag: Type.Optional(withMessage(Type.Boolean(), "flag must be a boolean value")),
  address: Type.Optional(AddressField),
  nested: Type.Optional(Type.Object({ inner: Type.Enum(["a", "b"]) })),
});
const problem = (value: unknown) => problemOf(Body, value, "Request body");

test("a valid value has no problem", () => {
  assert.equal(problem({ name: "n", count: 1, tags: ["x"], nested: { inner: "a" } }), undefined);
});

test("the root, missing and null fields, types, lengths and ranges are named", () => {
  for (const [value, expected] of [
    [null, "Request body must be a JSON object"],
    [[], "Request body must be a JSON object"],
    [{ count: 1 }, "name is required"],
    [{ name: null, count: 1 }, "name is required"],
    [{ name: 3, count: 1 }, "name must be a string"],
    [{ name: " ", count: 1 }, "name must not be empty"],
    [{ name: "x".repeat(11), count: 1 }, "name must be at most 10 characters"],
    [{ name: "n", count: 1.5 }, "count must be an integer"],
    [{ name: "n", count: 0 }, "count must be at least 1"],
    [{ name: "n", count: 1, tags: [1] }, "tags[0] must be a string"],
    [{ name: "n", count: 1, tags: [null] }, "tags[0] must be a string"],
    [{ name: "n", count: 1, nested: { inner: "c" } }, "nested.inner must be one of a, b"],
    [{ name: "n", count: 1, nested: {} }, "nested.inner is required"],
  ] as const) {
    assert.equal(problem(value), expected, JSON.stringify(value));
  }
});

test("the first wrong field in the schema's order is the one named", () => {
  assert.equal(problem({ count: "x", name: 5 }), "name must be a string");
});

test("a schema's own wording: a whole fixed message, or a phrase that covers every check", () => {
  assert.equal(problem({ name: "n", count: 1, flag: "yes" }), "flag must be a boolean value");
  assert.equal(problem({ name: "n", count: 1, flag: null }), "flag must be a boolean value");
  for (const address of ["0x12", 12, `0x${"zz".repeat(20)}`]) {
    assert.equal(problem({ name: "n", count: 1, address }), "address must be an address: 0x followed by 40 hex digits");
  }
  assert.equal(problem({ name: "n", count: 1, address: null }), "address is required");
  const Hex = withProblem(Type.String({ pattern: "^0x" }), { pattern: "must be hex" });
  assert.equal(problemOf(Type.Object({ h: Hex }), { h: "zz" }, "body"), "h must be hex");
  assert.equal(problemOf(Type.Object({ h: Hex }), { h: 1 }, "body"), "h must be a string");
});

test("a union is explained against the shape of the value's own kind", () => {
  const cycle = (value: unknown) => problemOf(CycleDuration, value, "cycleDuration", true);
  assert.equal(cycle(3), "cycleDuration must be a JSON object");
  assert.equal(cycle(null), "cycleDuration must be a JSON object");
  assert.equal(
    cycle("fortnight"),
    'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
  );
  assert.equal(cycle({ value: 1 }), "cycleDuration.unit must be one of minute, hour, day, week, month");
  assert.equal(cycle({ value: 0, unit: "day" }), "cycleDuration.value must be a whole number from 1 to 100000");
  assert.equal(cycle("3 Hours"), undefined);
});

test("objects told apart by a constant are explained against the shape it names, or the constant is named", () => {
  const policy = (value: unknown) => problemOf(CreatePolicyBody, value, "Request body");
  assert.equal(
    policy({ name: "p", policyType: "NOPE", policyData: {} }),
    "policyType must be one of PAYMASTER_SA_LIMIT, WEBHOOK, WALLET_DEPLOYMENT, MAX_COST_PER_OP, TIME_WINDOW, SENDER_ALLOWLIST, SENDER_BLOCKLIST, MAX_GAS_PRICE, RATE_LIMIT",
  );
  assert.equal(policy({ policyType: "NOPE" }), "name is required", "fields before the constant come first");
  assert.equal(policy({ name: "p", policyType: "WEBHOOK", policyData: {} }), "policyData.url is required");
  assert.equal(policy({ name: "p", policyType: "WALLET_DEPLOYMENT", policyData: {} }), undefined);
  assert.equal(
    policy({ name: "p", policyType: "PAYMASTER_SA_LIMIT", policyData: { type: "PAYMASTER" } }),
    "policyData.cycleDuration is required",
  );
});
