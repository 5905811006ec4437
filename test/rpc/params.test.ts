// The readers of RPC fields: what each accepts, what it makes of it, and the -32602 message naming the field otherwise.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { address, bytes, object, optionalBoolean, uint } from "../../src/rpc/params";
import { assertInvalidParams } from "../helpers/invalidParams";

const MAX_UINT256 = (1n << 256n) - 1n;
const NOT_A_UINT = "params[0].nonce must be a non-negative integer as 0x hex, a decimal string or a number";

describe("uint", () => {
  const accepted: { name: string; input: unknown; max?: bigint; expected: bigint }[] = [
    { name: "a number", input: 7, expected: 7n },
    { name: "zero", input: 0, expected: 0n },
    { name: "the largest safe number", input: Number.MAX_SAFE_INTEGER, expected: 9_007_199_254_740_991n },
    { name: "hex", input: "0x1f", expected: 31n },
    { name: "hex in upper-case digits", input: "0xABCDEF", expected: 0xabcdefn },
    { name: "hex with leading zeros", input: "0x0000", expected: 0n },
    { name: "64 hex digits: 2^256 - 1", input: `0x${"f".repeat(64)}`, expected: MAX_UINT256 },
    { name: "a decimal string", input: "1000", expected: 1000n },
    { name: "a decimal with leading zeros", input: "007", expected: 7n },
    { name: "78 decimal digits up to 2^256 - 1", input: MAX_UINT256.toString(), expected: MAX_UINT256 },
    { name: "exactly a given max", input: "0x64", max: 100n, expected: 100n },
  ];
  for (const { name, input, max, expected } of accepted) {
    test(name, () => assert.equal(uint(input, "params[0].nonce", max), expected));
  }

  const refused: { name: string; input: unknown; max?: bigint; expected: string }[] = [
    { name: "undefined", input: undefined, expected: NOT_A_UINT },
    { name: "null", input: null, expected: NOT_A_UINT },
    { name: "a negative number", input: -1, expected: NOT_A_UINT },
    { name: "a fraction", input: 1.5, expected: NOT_A_UINT },
    { name: "a number past 2^53", input: 2 ** 53, expected: NOT_A_UINT },
    { name: "a bigint (JSON has none)", input: 5n, expected: NOT_A_UINT },
    { name: "a bare 0x", input: "0x", expected: NOT_A_UINT },
    { name: "65 hex digits", input: `0x${"0".repeat(65)}`, expected: NOT_A_UINT },
    { name: "an upper-case 0X", input: "0X10", expected: NOT_A_UINT },
    { name: "hex without 0x", input: "ff", expected: NOT_A_UINT },
    { name: "a negative decimal string", input: "-1", expected: NOT_A_UINT },
    { name: "a signed decimal string", input: "+1", expected: NOT_A_UINT },
    { name: "an exponent", input: "1e3", expected: NOT_A_UINT },
    { name: "spaces", input: " 1", expected: NOT_A_UINT },
    { name: "an empty string", input: "", expected: NOT_A_UINT },
    { name: "79 decimal digits", input: "1".repeat(79), expected: NOT_A_UINT },
    { name: "a boolean", input: true, expected: NOT_A_UINT },
    {
      name: "78 decimal digits past 2^256 - 1",
      input: (MAX_UINT256 + 1n).toString(),
      expected: `params[0].nonce must be at most ${MAX_UINT256}`,
    },
    { name: "one past a given max", input: 101, max: 100n, expected: "params[0].nonce must be at most 100" },
  ];
  for (const { name, input, max, expected } of refused) {
    test(`refused: ${name}`, () => assertInvalidParams(() => uint(input, "params[0].nonce", max), expected));
  }
});

describe("address", () => {
  const MIXED = "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789";
  const accepted: { name: string; input: unknown; expected: string }[] = [
    { name: "lower case", input: MIXED.toLowerCase(), expected: MIXED.toLowerCase() },
    { name: "checksummed: given back in lower case", input: MIXED, expected: MIXED.toLowerCase() },
    { name: "the zero address", input: `0x${"0".repeat(40)}`, expected: `0x${"0".repeat(40)}` },
  ];
  for (const { name, input, expected } of accepted)
    test(name, () => assert.equal(address(input, "params[0].sender"), expected));

  const malformed = "params[0].sender must be an address: 0x followed by 40 hex digits";
  const refused: { name: string; input: unknown; expected: string }[] = [
    { name: "undefined", input: undefined, expected: "params[0].sender is required" },
    { name: "null", input: null, expected: "params[0].sender is required" },
    { name: "39 digits", input: `0x${"a".repeat(39)}`, expected: malformed },
    { name: "41 digits", input: `0x${"a".repeat(41)}`, expected: malformed },
    { name: "no 0x", input: "a".repeat(40), expected: malformed },
    { name: "a non-hex digit", input: `0x${"g".repeat(40)}`, expected: malformed },
    { name: "a number", input: 1, expected: malformed },
    { name: "an empty string", input: "", expected: malformed },
  ];
  for (const { name, input, expected } of refused) {
    test(`refused: ${name}`, () => assertInvalidParams(() => address(input, "params[0].sender"), expected));
  }
});

describe("bytes", () => {
  const accepted: { name: string; input: unknown; expected: string }[] = [
    { name: "absent: empty", input: undefined, expected: "0x" },
    { name: "null: empty", input: null, expected: "0x" },
    { name: "0x", input: "0x", expected: "0x" },
    { name: "whole bytes", input: "0xa0712d68", expected: "0xa0712d68" },
    { name: "upper-case digits: given back in lower case", input: "0xDEADBEEF", expected: "0xdeadbeef" },
  ];
  for (const { name, input, expected } of accepted)
    test(name, () => assert.equal(bytes(input, "params[0].callData"), expected));

  const malformed = "params[0].callData must be 0x-prefixed hex of whole bytes";
  const refused: { name: string; input: unknown }[] = [
    { name: "an odd number of digits", input: "0xabc" },
    { name: "no 0x", input: "abcd" },
    { name: "a non-hex digit", input: "0xzz" },
    { name: "an empty string", input: "" },
    { name: "a number", input: 0 },
    { name: "an array of bytes", input: [1, 2] },
  ];
  for (const { name, input } of refused) {
    test(`refused: ${name}`, () => assertInvalidParams(() => bytes(input, "params[0].callData"), malformed));
  }
});

describe("optionalBoolean and object", () => {
  const booleans: { input: unknown; expected: boolean | undefined }[] = [
    { input: true, expected: true },
    { input: false, expected: false },
    { input: undefined, expected: undefined },
    { input: null, expected: undefined },
  ];
  for (const { input, expected } of booleans) {
    test(`optionalBoolean(${String(input)}) → ${String(expected)}`, () =>
      assert.equal(optionalBoolean(input, "params[1].calculateGasLimits"), expected));
  }
  for (const input of ["true", 1, 0, {}]) {
    test(`optionalBoolean refuses ${JSON.stringify(input)}`, () =>
      assertInvalidParams(
        () => optionalBoolean(input, "params[1].calculateGasLimits"),
        "params[1].calculateGasLimits must be true or false",
      ));
  }

  test("object gives back the very object", () => {
    const value = { a: 1 };
    assert.equal(object(value, "params[0]"), value);
  });
  for (const input of [null, undefined, [], "x", 1, true]) {
    test(`object refuses ${JSON.stringify(input) ?? "undefined"}`, () =>
      assertInvalidParams(() => object(input, "params[0]"), "params[0] must be an object"));
  }
});
