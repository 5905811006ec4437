// The account layouts of callData: each execute/executeBatch selector of each layout, decoded for the account named and,
// when none is named, for the layout the selector belongs to. The selectors are computed here from the methods'
// signatures, so a wrong selector in the service's table fails this test.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type AbiFunction,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  parseAbiItem,
  parseAbiParameters,
  toFunctionSelector,
} from "viem";
import {
  type Call,
  decodeAccountCalls,
  decodeWith,
  indexSelectors,
  SUPPORTED_ACCOUNTS,
} from "../../src/sponsorship/callData";
import { randomAddress, randomHexBytes, randomInt, randomUint } from "../helpers/randomAbiValues";

const A: Hex = "0x1111111111111111111111111111111111111111";
const B: Hex = "0x2222222222222222222222222222222222222222";
const MINT: Hex = "0xa0712d680000000000000000000000000000000000000000000000000000000000000005";

type Shape = "single" | "batchWithValues" | "batchWithoutValues" | "safe" | "callArray" | "erc7579";

/** Every method of every layout we decode, as the accounts' sources declare them. */
const METHODS: { account: string; signature: string; shape: Shape }[] = [
  { account: "BICONOMY 2.0.0", signature: "function execute_ncC(address,uint256,bytes)", shape: "single" },
  { account: "BICONOMY 2.0.0", signature: "function execute(address,uint256,bytes)", shape: "single" },
  {
    account: "BICONOMY 2.0.0",
    signature: "function executeBatch_y6U(address[],uint256[],bytes[])",
    shape: "batchWithValues",
  },
  {
    account: "BICONOMY 2.0.0",
    signature: "function executeBatch(address[],uint256[],bytes[])",
    shape: "batchWithValues",
  },
  { account: "BICONOMY 1.0.0", signature: "function executeCall_s1m(address,uint256,bytes)", shape: "single" },
  { account: "BICONOMY 1.0.0", signature: "function executeCall(address,uint256,bytes)", shape: "single" },
  {
    account: "BICONOMY 1.0.0",
    signature: "function executeBatchCall_4by(address[],uint256[],bytes[])",
    shape: "batchWithValues",
  },
  {
    account: "BICONOMY 1.0.0",
    signature: "function executeBatchCall(address[],uint256[],bytes[])",
    shape: "batchWithValues",
  },
  { account: "INFINITISM 1.0.0", signature: "function execute(address,uint256,bytes)", shape: "single" },
  { account: "INFINITISM 1.0.0", signature: "function executeBatch(address[],bytes[])", shape: "batchWithoutValues" },
  { account: "SAFE 1.4.1", signature: "function executeUserOp(address,uint256,bytes,uint8)", shape: "safe" },
  {
    account: "SAFE 1.4.1",
    signature: "function executeUserOpWithErrorString(address,uint256,bytes,uint8)",
    shape: "safe",
  },
  { account: "INFINITISM 0.7.0", signature: "function execute(address,uint256,bytes)", shape: "single" },
  {
    account: "INFINITISM 0.7.0",
    signature: "function executeBatch(address[],uint256[],bytes[])",
    shape: "batchWithValues",
  },
  { account: "INFINITISM 0.8.0", signature: "function execute(address,uint256,bytes)", shape: "single" },
  { account: "INFINITISM 0.8.0", signature: "function executeBatch((address,uint256,bytes)[])", shape: "callArray" },
  { account: "ERC7579 1.0.0", signature: "function execute(bytes32,bytes)", shape: "erc7579" },
  { account: "COINBASE_SMART_WALLET 1", signature: "function execute(address,uint256,bytes)", shape: "single" },
  {
    account: "COINBASE_SMART_WALLET 1",
    signature: "function executeBatch((address,uint256,bytes)[])",
    shape: "callArray",
  },
];

/** The batch every batch shape encodes: A with MINT and 1 wei, then B with no data. */
const BATCH: Call[] = [
  { to: A, value: 1n, data: MINT },
  { to: B, value: 0n, data: "0x" },
];

/** callData of `signature` calling A with MINT and 1 wei, then (for batches) B with no data. */
function encode(signature: string, shape: Shape): { callData: Hex; calls: Call[] } {
  const method = parseAbiItem(signature) as AbiFunction;
  const encodeWith = (args: readonly unknown[]) =>
    concat([toFunctionSelector(method), encodeAbiParameters(method.inputs, args)]);
  switch (shape) {
    case "single":
      return { callData: encodeWith([A, 1n, MINT]), calls: [{ to: A, value: 1n, data: MINT }] };
    case "safe":
      return { callData: encodeWith([A, 1n, MINT, 0]), calls: [{ to: A, value: 1n, data: MINT }] };
    case "batchWithValues":
      return {
        callData: encodeWith([
          [A, B],
          [1n, 0n],
          [MINT, "0x"],
        ]),
        calls: [
          { to: A, value: 1n, data: MINT },
          { to: B, value: 0n, data: "0x" },
        ],
      };
    case "callArray":
      return {
        callData: encodeWith([
          [
            [A, 1n, MINT],
            [B, 0n, "0x"],
          ],
        ]),
        calls: BATCH,
      };
    case "erc7579": {
      // Batch call type (0x01), default exec type and mode selector: abi.encode of Execution[].
      const mode = "0x0100000000000000000000000000000000000000000000000000000000000000";
      const executions = encodeAbiParameters(parseAbiParameters("(address,uint256,bytes)[]"), [
        [
          [A, 1n, MINT],
          [B, 0n, "0x"],
        ],
      ]);
      return { callData: encodeWith([mode, executions]), calls: BATCH };
    }
    case "batchWithoutValues":
      return {
        callData: encodeWith([
          [A, B],
          [MINT, "0x"],
        ]),
        calls: [
          { to: A, value: 0n, data: MINT },
          { to: B, value: 0n, data: "0x" },
        ],
      };
  }
}

const infoOf = (account: string) => {
  const [name = "", version = ""] = account.split(" ");
  return { name, version };
};

describe("each selector of each layout", () => {
  for (const { account, signature, shape } of METHODS) {
    const { callData, calls } = encode(signature, shape);
    const selector = toFunctionSelector(signature);

    test(`${account} ${signature} (${selector}): decoded for the account named`, () => {
      assert.deepEqual(decodeAccountCalls(callData, infoOf(account)), { ok: true, calls });
    });

    test(`${account} ${signature} (${selector}): decoded from the selector when no account is named`, () => {
      assert.deepEqual(decodeAccountCalls(callData), { ok: true, calls });
    });

    for (const other of SUPPORTED_ACCOUNTS.filter((name) => name !== account)) {
      const shared = METHODS.some((m) => m.account === other && toFunctionSelector(m.signature) === selector);
      test(`${account} ${selector} named as ${other}: ${shared ? "the same method there" : "refused"}`, () => {
        const decoded = decodeAccountCalls(callData, infoOf(other));
        if (shared) assert.deepEqual(decoded, { ok: true, calls });
        else
          assert.deepEqual(decoded, { ok: false, reason: `unknown callData layout: selector ${selector} of ${other}` });
      });
    }
  }

  // The loop above checks that each of these reads the same calls whichever account is named and when none is.
  test("the selectors several layouts share are exactly these", () => {
    const accountsBySelector = new Map<string, string[]>();
    for (const { account, signature } of METHODS) {
      const selector = toFunctionSelector(signature);
      accountsBySelector.set(selector, [...(accountsBySelector.get(selector) ?? []), account]);
    }
    const shared = [...accountsBySelector].filter(([, accounts]) => accounts.length > 1);
    assert.deepEqual(Object.fromEntries(shared), {
      "0xb61d27f6": [
        "BICONOMY 2.0.0",
        "INFINITISM 1.0.0",
        "INFINITISM 0.7.0",
        "INFINITISM 0.8.0",
        "COINBASE_SMART_WALLET 1",
      ],
      "0x47e1da2a": ["BICONOMY 2.0.0", "INFINITISM 0.7.0"],
      "0x34fcd5be": ["INFINITISM 0.8.0", "COINBASE_SMART_WALLET 1"],
    });
  });

  test("every account the service knows has its methods in this table", () => {
    assert.deepEqual([...new Set(METHODS.map((m) => m.account))].sort(), [...SUPPORTED_ACCOUNTS].sort());
  });
});

describe("no account named", () => {
  test("a selector of no layout is refused with how to name the account and the layouts known", () => {
    const decoded = decodeAccountCalls("0xdeadbeef0000");
    assert.equal(decoded.ok, false);
    assert.equal(
      !decoded.ok && decoded.reason,
      "unknown callData layout: selector 0xdeadbeef is no execute or executeBatch method of a known account; name " +
        'the account in sponsorshipInfo.smartAccountInfo ({"name", "version"}); known accounts: BICONOMY 2.0.0, ' +
        "BICONOMY 1.0.0, INFINITISM 1.0.0, INFINITISM 0.7.0, INFINITISM 0.8.0, SAFE 1.4.1, ERC7579 1.0.0, " +
        "COINBASE_SMART_WALLET 1",
    );
  });

  test("callData shorter than a selector is refused the same way", () => {
    const decoded = decodeAccountCalls("0x18df");
    assert.match(!decoded.ok ? decoded.reason : "", /^unknown callData layout: selector 0x18df is no execute/);
  });

  test("a known selector whose arguments do not decode is refused, naming the layouts it belongs to", () => {
    assert.deepEqual(decodeAccountCalls("0xb61d27f61234"), {
      ok: false,
      reason:
        "callData does not decode as BICONOMY 2.0.0 or INFINITISM 1.0.0 or INFINITISM 0.7.0 or INFINITISM 0.8.0 or " +
        "COINBASE_SMART_WALLET 1 selector 0xb61d27f6",
    });
    assert.deepEqual(decodeAccountCalls("0x18dfb3c7"), {
      ok: false,
      reason: "callData does not decode as INFINITISM 1.0.0 selector 0x18dfb3c7",
    });
  });

  test("a Safe delegatecall is refused whether the account is named or not", () => {
    const callData = encodeFunctionData({
      abi: [parseAbiItem("function executeUserOp(address,uint256,bytes,uint8)") as AbiFunction],
      args: [A, 0n, MINT, 1],
    });
    const refused = { ok: false, reason: "Safe delegatecall operations are never sponsored" };
    assert.deepEqual(decodeAccountCalls(callData), refused);
    assert.deepEqual(decodeAccountCalls(callData, { name: "safe", version: "1.4.1" }), refused);
  });

  test("empty callData makes no call", () => {
    assert.deepEqual(decodeAccountCalls("0x"), { ok: true, calls: [] });
  });
});

describe("a named account is decoded as that account only", () => {
  test("SimpleAccount's executeBatch named as BICONOMY 2.0.0 is refused although the selector is known", () => {
    const { callData } = encode("function executeBatch(address[],bytes[])", "batchWithoutValues");
    assert.deepEqual(decodeAccountCalls(callData, { name: "BICONOMY", version: "2.0.0" }), {
      ok: false,
      reason: "unknown callData layout: selector 0x18dfb3c7 of BICONOMY 2.0.0",
    });
  });

  test("an unknown account is refused, even with a selector another layout knows", () => {
    const { callData } = encode("function execute(address,uint256,bytes)", "single");
    assert.deepEqual(decodeAccountCalls(callData, { name: "KERNEL", version: "3.0.0" }), {
      ok: false,
      reason:
        "unknown smart account KERNEL 3.0.0; supported: BICONOMY 2.0.0, BICONOMY 1.0.0, INFINITISM 1.0.0, " +
        "INFINITISM 0.7.0, INFINITISM 0.8.0, SAFE 1.4.1, ERC7579 1.0.0, COINBASE_SMART_WALLET 1",
    });
  });

  test("names are matched without regard to case", () => {
    const { callData, calls } = encode("function executeBatch(address[],bytes[])", "batchWithoutValues");
    assert.deepEqual(decodeAccountCalls(callData, { name: "Infinitism", version: "1.0.0" }), { ok: true, calls });
  });
});

describe("a selector two layouts read differently", () => {
  // No two of our layouts do; this index makes one up to show what would happen.
  const one = () => ({ ok: true as const, calls: [] });
  const other = () => ({ ok: true as const, calls: [{ to: A, value: 0n, data: "0x" as Hex }] });
  const index = indexSelectors({ "ONE 1.0.0": { "0x12345678": one }, "TWO 1.0.0": { "0x12345678": other } });

  test("is ambiguous when no account is named: refused, naming both and how to choose", () => {
    const decoded = decodeWith("0x12345678", undefined, index);
    assert.equal(decoded.ok, false);
    assert.match(
      !decoded.ok ? decoded.reason : "",
      /^ambiguous callData layout: selector 0x12345678 is read differently by ONE 1.0.0 and TWO 1.0.0; name the account in sponsorshipInfo.smartAccountInfo/,
    );
  });

  test("layouts that share a selector with one decoder are not ambiguous", () => {
    const shared = indexSelectors({ "ONE 1.0.0": { "0x12345678": other }, "TWO 1.0.0": { "0x12345678": other } });
    assert.deepEqual(decodeWith("0x12345678", undefined, shared), other());
  });
});

describe("batch arrays", () => {
  // Not covered above: the arrays of a batch must pair up; Biconomy's may leave the value array empty.
  const withValues = parseAbiItem("function executeBatch(address[],uint256[],bytes[])") as AbiFunction;
  const withoutValues = parseAbiItem("function executeBatch(address[],bytes[])") as AbiFunction;
  const MISMATCH = { ok: false, reason: "batch callData has arrays of different lengths" };
  const cases: { name: string; callData: Hex; expected: unknown }[] = [
    {
      name: "Biconomy, no values at all: every call with value 0",
      callData: encodeFunctionData({ abi: [withValues], args: [[A, B], [], [MINT, "0x"]] }),
      expected: {
        ok: true,
        calls: [
          { to: A, value: 0n, data: MINT },
          { to: B, value: 0n, data: "0x" },
        ],
      },
    },
    {
      name: "Biconomy, fewer values than targets",
      callData: encodeFunctionData({ abi: [withValues], args: [[A, B], [1n], [MINT, "0x"]] }),
      expected: MISMATCH,
    },
    {
      name: "Biconomy, more values than targets",
      callData: encodeFunctionData({ abi: [withValues], args: [[A], [1n, 2n], [MINT]] }),
      expected: MISMATCH,
    },
    {
      name: "Biconomy, fewer datas than targets",
      callData: encodeFunctionData({ abi: [withValues], args: [[A, B], [], [MINT]] }),
      expected: MISMATCH,
    },
    {
      name: "SimpleAccount, fewer datas than targets",
      callData: encodeFunctionData({ abi: [withoutValues], args: [[A, B], [MINT]] }),
      expected: MISMATCH,
    },
    {
      name: "SimpleAccount, more datas than targets",
      callData: encodeFunctionData({ abi: [withoutValues], args: [[A], [MINT, "0x"]] }),
      expected: MISMATCH,
    },
    {
      name: "SimpleAccount, empty arrays: no call",
      callData: encodeFunctionData({ abi: [withoutValues], args: [[], []] }),
      expected: { ok: true, calls: [] },
    },
  ];
  for (const { name, callData, expected } of cases) {
    test(name, () => assert.deepEqual(decodeAccountCalls(callData), expected));
  }
});

describe("execute(address, uint256, bytes) read from its canonical form gives what viem's decoder gives", () => {
  const SINGLE = parseAbiParameters("address, uint256, bytes");
  const execute = toFunctionSelector("function execute(address,uint256,bytes)");
  /** What the service reads from `args`, and what viem's decoder reads (or that either refuses). */
  const both = (args: Hex) => {
    const service = decodeAccountCalls(`${execute}${args.slice(2)}` as Hex, { name: "INFINITISM", version: "1.0.0" });
    let viem: DecodedCallsLike;
    try {
      const [to, value, data] = decodeAbiParameters(SINGLE, args);
      viem = { ok: true, calls: [{ to, value, data }] };
    } catch {
      viem = { ok: false };
    }
    return { service: service.ok ? service : { ok: false }, viem };
  };
  type DecodedCallsLike = { ok: true; calls: Call[] } | { ok: false };
  /** Changes one hex digit at a random place after 0x. */
  const mutate = (hex: Hex): Hex => {
    const at = 2 + randomInt(hex.length - 2);
    return `${hex.slice(0, at)}${"0123456789abcdefABCDEF"[randomInt(22)]}${hex.slice(at + 1)}` as Hex;
  };

  test("500 random calls, as encoded and in upper case", () => {
    for (let i = 0; i < 500; i++) {
      const args = encodeAbiParameters(SINGLE, [randomAddress(), randomUint(256), randomHexBytes()]);
      const upper = `0x${args.slice(2).toUpperCase()}` as Hex;
      for (const form of [args, upper]) {
        const { service, viem } = both(form);
        assert.deepEqual(service, viem, form);
        assert.ok(service.ok);
      }
    }
  });

  test("500 random calls with a digit changed, cut short or lengthened: the same values or the same refusal", () => {
    for (let i = 0; i < 500; i++) {
      const args = encodeAbiParameters(SINGLE, [randomAddress(), randomUint(256), randomHexBytes()]);
      const variants: Hex[] = [
        mutate(args),
        mutate(mutate(args)),
        args.slice(0, args.length - 2 * (1 + randomInt(40))) as Hex,
        `${args}${"00".repeat(1 + randomInt(40))}` as Hex,
        // The head's offset and length words, where a change moves or resizes the bytes.
        `${args.slice(0, 130)}${randomUint(8).toString(16).padStart(64, "0")}${args.slice(194)}` as Hex,
        `${args.slice(0, 194)}${randomUint(16).toString(16).padStart(64, "0")}${args.slice(258)}` as Hex,
        `${args.slice(0, 2)}${randomUint(96).toString(16).padStart(24, "0")}${args.slice(26)}` as Hex,
      ];
      for (const variant of variants) {
        const { service, viem } = both(variant);
        assert.deepEqual(service, viem, variant);
      }
    }
  });
});
