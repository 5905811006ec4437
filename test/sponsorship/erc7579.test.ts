// ERC-7579's execute(bytes32 mode, bytes executionCalldata), read as the whitelist reads it: every mode byte that
// matters, each call type and exec type, the packed single execution, and executeUserOp wrapping execute. The callData
// here is built with viem (encodePacked, encodeAbiParameters), independently of the service's decoder.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  getAddress,
  type Hex,
  pad,
  parseAbi,
  parseAbiParameters,
  toFunctionSelector,
} from "viem";
import { type DecodedCalls, decodeAccountCalls } from "../../src/sponsorship/callData";

const A = getAddress("0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48");
const B = getAddress("0x2222222222222222222222222222222222222222");
const MINT: Hex = "0xa0712d680000000000000000000000000000000000000000000000000000000000000005";

const erc7579 = parseAbi(["function execute(bytes32 mode, bytes executionCalldata)"]);
const ERC7579 = { name: "ERC7579", version: "1.0.0" };

/** mode = callType ++ execType ++ 4 unused bytes ++ modeSelector ++ 22 bytes of payload. */
function mode(
  callType: Hex,
  execType: Hex = "0x00",
  modeSelector: Hex = "0x00000000",
  unused: Hex = "0x00000000",
): Hex {
  return concat([callType, execType, unused, modeSelector, pad("0x", { size: 22 })]);
}

const single = (to: Address, value: bigint, data: Hex) =>
  encodePacked(["address", "uint256", "bytes"], [to, value, data]);
const batch = (calls: [Address, bigint, Hex][]) =>
  encodeAbiParameters(parseAbiParameters("(address target, uint256 value, bytes callData)[]"), [
    calls.map(([target, value, callData]) => ({ target, value, callData })),
  ]);
const execute = (m: Hex, executionCalldata: Hex) =>
  encodeFunctionData({ abi: erc7579, functionName: "execute", args: [m, executionCalldata] });

const EXECUTE_USER_OP = toFunctionSelector(
  "executeUserOp((address,uint256,bytes,bytes,bytes32,uint256,bytes32,bytes,bytes),bytes32)",
);

test("the selectors are those of the methods' signatures", () => {
  assert.equal(toFunctionSelector("execute(bytes32,bytes)"), "0xe9ae5c53");
  assert.equal(EXECUTE_USER_OP, "0x8dd7712f");
});

describe("modes of execute(bytes32,bytes), named as ERC7579 1.0.0 and unnamed alike", () => {
  const refused = (reason: string): DecodedCalls => ({ ok: false, reason });
  const cases: { name: string; callData: Hex; expected: DecodedCalls }[] = [
    {
      name: "single call (0x00): target, value and data packed",
      callData: execute(mode("0x00"), single(A, 7n, MINT)),
      expected: { ok: true, calls: [{ to: A, value: 7n, data: MINT }] },
    },
    {
      name: "single call without data: a plain transfer",
      callData: execute(mode("0x00"), single(B, 10n ** 18n, "0x")),
      expected: { ok: true, calls: [{ to: B, value: 10n ** 18n, data: "0x" }] },
    },
    {
      name: "single call, try exec type (0x01)",
      callData: execute(mode("0x00", "0x01"), single(A, 0n, MINT)),
      expected: { ok: true, calls: [{ to: A, value: 0n, data: MINT }] },
    },
    {
      name: "single call, the 4 unused bytes set: ignored, as the accounts ignore them",
      callData: execute(mode("0x00", "0x00", "0x00000000", "0xffffffff"), single(A, 0n, MINT)),
      expected: { ok: true, calls: [{ to: A, value: 0n, data: MINT }] },
    },
    {
      name: "batch (0x01): abi.encode of Execution[]",
      callData: execute(
        mode("0x01"),
        batch([
          [A, 1n, MINT],
          [B, 0n, "0x"],
        ]),
      ),
      expected: {
        ok: true,
        calls: [
          { to: A, value: 1n, data: MINT },
          { to: B, value: 0n, data: "0x" },
        ],
      },
    },
    {
      name: "batch, try exec type",
      callData: execute(mode("0x01", "0x01"), batch([[A, 0n, MINT]])),
      expected: { ok: true, calls: [{ to: A, value: 0n, data: MINT }] },
    },
    {
      name: "an empty batch: no call (the whitelist rule refuses it as making none)",
      callData: execute(mode("0x01"), batch([])),
      expected: { ok: true, calls: [] },
    },
    {
      name: "delegatecall (0xff): refused",
      callData: execute(mode("0xff"), single(A, 0n, MINT)),
      expected: refused(
        "ERC-7579 delegatecall executions are never sponsored: they run code of the target's choice as the account",
      ),
    },
    {
      name: "static call (0xfe): refused",
      callData: execute(mode("0xfe"), single(A, 0n, MINT)),
      expected: refused("ERC-7579 static calls are not sponsored: they change nothing on chain"),
    },
    {
      name: "an unknown call type (0x02): refused",
      callData: execute(mode("0x02"), single(A, 0n, MINT)),
      expected: refused("unknown ERC-7579 call type 0x02"),
    },
    {
      name: "an unknown exec type (0x02): refused",
      callData: execute(mode("0x00", "0x02"), single(A, 0n, MINT)),
      expected: refused("unknown ERC-7579 exec type 0x02"),
    },
    {
      name: "a mode selector other than the default: refused",
      callData: execute(mode("0x00", "0x00", "0xeda86f9b"), single(A, 0n, MINT)),
      expected: refused("unknown ERC-7579 mode selector 0xeda86f9b: only the default 0x00000000 is read"),
    },
    {
      name: "a single execution shorter than target and value: refused",
      callData: execute(mode("0x00"), encodePacked(["address", "uint128"], [A, 1n])),
      expected: refused("ERC-7579 single execution is shorter than its target and value (52 bytes)"),
    },
    {
      name: "a batch whose executionCalldata is not Execution[]: does not decode",
      callData: execute(mode("0x01"), "0x1234"),
      expected: refused("callData does not decode as ERC7579 1.0.0 selector 0xe9ae5c53"),
    },
  ];
  for (const { name, callData, expected } of cases) {
    test(name, () => {
      assert.deepEqual(decodeAccountCalls(callData, ERC7579), expected);
      assert.deepEqual(decodeAccountCalls(callData), expected);
    });
  }
});

describe("executeUserOp(userOp, hash) ++ inner: EntryPoint v0.7's wrapper, read one level", () => {
  const inner = execute(mode("0x00"), single(A, 0n, MINT));

  test("wrapping execute(bytes32,bytes): the inner execution's calls", () => {
    const expected = { ok: true, calls: [{ to: A, value: 0n, data: MINT }] };
    assert.deepEqual(decodeAccountCalls(concat([EXECUTE_USER_OP, inner]), ERC7579), expected);
    assert.deepEqual(decodeAccountCalls(concat([EXECUTE_USER_OP, inner])), expected);
  });

  test("wrapping anything else the account could run on itself: refused", () => {
    const installModule = concat([toFunctionSelector("installModule(uint256,address,bytes)"), pad("0x01")]);
    assert.deepEqual(decodeAccountCalls(concat([EXECUTE_USER_OP, installModule]), ERC7579), {
      ok: false,
      reason: "executeUserOp wraps selector 0x9517e29f: only execute(bytes32,bytes) (0xe9ae5c53) is read inside it",
    });
  });

  test("wrapping a second executeUserOp: refused (one level only)", () => {
    const twice = concat([EXECUTE_USER_OP, EXECUTE_USER_OP, inner]);
    const decoded = decodeAccountCalls(twice, ERC7579);
    assert.deepEqual(decoded, {
      ok: false,
      reason: "executeUserOp wraps selector 0x8dd7712f: only execute(bytes32,bytes) (0xe9ae5c53) is read inside it",
    });
  });

  test("named as another account, executeUserOp is no method of its layout", () => {
    assert.deepEqual(decodeAccountCalls(concat([EXECUTE_USER_OP, inner]), { name: "INFINITISM", version: "0.7.0" }), {
      ok: false,
      reason: "unknown callData layout: selector 0x8dd7712f of INFINITISM 0.7.0",
    });
  });
});

describe("the packed single execution is read as viem packs it", () => {
  // Edge values of each part: the smallest and largest value, an address with leading zeros, long and empty data.
  const cases: [Address, bigint, Hex][] = [
    [getAddress("0x0000000000000000000000000000000000000001"), 0n, "0x"],
    [A, 2n ** 256n - 1n, MINT],
    [B, 1n, `0x${"ab".repeat(1000)}`],
    [getAddress("0xffffffffffffffffffffffffffffffffffffffff"), 12345n, "0x00"],
  ];
  for (const [to, value, data] of cases) {
    test(`to ${to}, value ${value}, ${(data.length - 2) / 2} bytes of data`, () => {
      assert.deepEqual(decodeAccountCalls(execute(mode("0x00"), single(to, value, data))), {
        ok: true,
        calls: [{ to, value, data }],
      });
    });
  }
});
