// The permit of an ERC20 context (params[3].permit, params[2] in pm_sponsorUserOperation): its shape is checked by the
// context's published schema, its range and deadline by the reader after it, and every refusal keeps the exact words
// the reader gave before the schema described the permit.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { maxUint256 } from "viem";
import { parseTokenContext } from "../../src/rpc/tokenContext";
import { assertInvalidParams } from "../helpers/invalidParams";

const TOKEN = "0x1c7d4b196cb0c7b01d743fbc6116a902379c7238";
const MAX_HEX = `0x${"f".repeat(64)}`;
const SIGNATURE = `0x${"ab".repeat(65)}`;
const good = { value: "1000000", deadline: MAX_HEX, signature: SIGNATURE };
const context = (permit: unknown) => ({ token: TOKEN, permit });

const UINT = "must be a uint256, as 0x-prefixed hex or a decimal string";
const OBJECT = "params[3].permit must be an object { value, deadline, signature }";
const VALUE = `params[3].permit.value ${UINT}`;
const DEADLINE = `params[3].permit.deadline ${UINT}`;
const SIGNATURE_WORDS = "params[3].permit.signature must be the owner's signature as non-empty 0x-prefixed hex bytes";
const NOT_MAXIMUM =
  `params[3].permit.deadline must be the maximum uint256 (${maxUint256}): the only deadline the up-front token ` +
  "paymaster runs a permit with, since a token reading the clock breaks validation's rules";

describe("a permit the context's reader takes", () => {
  test("hex or decimal figures, the maximum deadline, the signature lowercased, other members ignored", () => {
    const read = parseTokenContext(
      context({
        value: "0xf4240",
        deadline: maxUint256.toString(),
        signature: SIGNATURE.toUpperCase().replace("0X", "0x"),
        extra: 1,
      }),
      "params[3]",
    );
    assert.deepEqual(read.permit, { value: 1_000_000n, signature: SIGNATURE, label: "params[3].permit" });
  });

  test("none when absent or null", () => {
    assert.equal(parseTokenContext({ token: TOKEN }, "params[3]").permit, undefined);
    assert.equal(parseTokenContext(context(null), "params[3]").permit, undefined);
  });

  test("pm_sponsorUserOperation's context names params[2]", () => {
    assertInvalidParams(
      () => parseTokenContext(context({ ...good, value: "-1" }), "params[2]"),
      `params[2].permit.value ${UINT}`,
    );
  });
});

describe("a permit of the wrong shape is -32602 in the reader's own words", () => {
  const cases: [string, unknown, string][] = [
    ["a string", "0x12", OBJECT],
    ["an array", [good], OBJECT],
    ["a number", 5, OBJECT],
    ["no value", { deadline: MAX_HEX, signature: SIGNATURE }, VALUE],
    ["a null value", { ...good, value: null }, VALUE],
    ["a negative value", { ...good, value: "-1" }, VALUE],
    ["a value as a JSON number", { ...good, value: 1_000_000 }, VALUE],
    ["a value of 65 hex digits", { ...good, value: `0x1${"0".repeat(64)}` }, VALUE],
    ["a value above the maximum uint256", { ...good, value: `${maxUint256 + 1n}` }, VALUE],
    ["no deadline", { value: "1", signature: SIGNATURE }, DEADLINE],
    ["a deadline of 0x alone", { ...good, deadline: "0x" }, DEADLINE],
    ["a deadline short of the maximum", { ...good, deadline: "1700000000" }, NOT_MAXIMUM],
    ["no signature", { value: "1", deadline: MAX_HEX }, SIGNATURE_WORDS],
    ["an empty signature", { ...good, signature: "0x" }, SIGNATURE_WORDS],
    ["a signature of half a byte", { ...good, signature: "0xabc" }, SIGNATURE_WORDS],
    ["a signature without 0x", { ...good, signature: "ab".repeat(65) }, SIGNATURE_WORDS],
    // Several problems: the first in the order value, deadline, signature.
    ["a bad value and signature", { ...good, value: "x", signature: "0x" }, VALUE],
  ];
  for (const [what, permit, message] of cases) {
    test(what, () => assertInvalidParams(() => parseTokenContext(context(permit), "params[3]"), message));
  }

  test("a bad token is named before a bad permit, as when the permit was read last", () => {
    assertInvalidParams(
      () => parseTokenContext({ token: "0x12", permit: "0x12" }, "params[3]"),
      'params[3].token must be a token address (0x followed by 40 hex digits), got "0x12"',
    );
  });
});
