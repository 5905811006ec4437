// The selectors computed from a whitelisted contract's ABI decide what the service pays for: each case's expected
// selector is computed by viem from the signature written out by hand, never by the code under test.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { toFunctionSelector } from "viem";
import { checkWhitelistedMethods, InvalidAbiError, parseContractAbi } from "../../src/sponsorship/contractAbi";

const fn = (name: string, types: unknown[] = []) => ({
  type: "function",
  name,
  inputs: types.map((t) => (typeof t === "string" ? { name: "", type: t } : t)),
});

/** The functions expected from an ABI: each signature with its selector. */
const functions = (...signatures: string[]) =>
  signatures.map((signature) => ({
    name: signature.slice(0, signature.indexOf("(")),
    signature,
    selector: toFunctionSelector(signature),
  }));

function assertRefused(run: () => unknown, message: string): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof InvalidAbiError, `an InvalidAbiError, not ${String(error)}`);
    assert.equal(error.message, message);
    return true;
  });
}

describe("parseContractAbi: selectors", () => {
  const cases: { name: string; abi: unknown[]; expected: { functions: unknown[]; methods: string[] } }[] = [
    {
      name: "ERC-20 transfer: the well-known 0xa9059cbb",
      abi: [fn("transfer", ["address", "uint256"])],
      expected: { functions: functions("transfer(address,uint256)"), methods: ["transfer"] },
    },
    {
      name: "no inputs",
      abi: [fn("mint")],
      expected: { functions: functions("mint()"), methods: ["mint"] },
    },
    {
      name: "inputs absent: no parameters",
      abi: [{ type: "function", name: "pause" }],
      expected: { functions: functions("pause()"), methods: ["pause"] },
    },
    {
      name: "type absent: a function",
      abi: [{ name: "mint", inputs: [{ type: "uint256" }] }],
      expected: { functions: functions("mint(uint256)"), methods: ["mint"] },
    },
    {
      name: "overloads: one selector each, the name once in methods",
      abi: [
        fn("safeTransferFrom", ["address", "address", "uint256"]),
        fn("safeTransferFrom", ["address", "address", "uint256", "bytes"]),
      ],
      expected: {
        functions: functions(
          "safeTransferFrom(address,address,uint256)",
          "safeTransferFrom(address,address,uint256,bytes)",
        ),
        methods: ["safeTransferFrom"],
      },
    },
    {
      name: "uint and int are uint256 and int256",
      abi: [fn("set", ["uint", "int", "uint[]", "int[2]"])],
      expected: { functions: functions("set(uint256,int256,uint256[],int256[2])"), methods: ["set"] },
    },
    {
      name: "every size of bytesN and uintN at the edges",
      abi: [
        fn("edges", ["bytes1", "bytes32", "uint8", "uint256", "int8", "int256", "bool", "string", "bytes", "function"]),
      ],
      expected: {
        functions: functions("edges(bytes1,bytes32,uint8,uint256,int8,int256,bool,string,bytes,function)"),
        methods: ["edges"],
      },
    },
    {
      name: "nested arrays",
      abi: [fn("grid", ["uint256[2][]", "address[][3]"])],
      expected: { functions: functions("grid(uint256[2][],address[][3])"), methods: ["grid"] },
    },
    {
      name: "a tuple, written out",
      abi: [fn("order", [{ type: "tuple", components: [{ type: "address" }, { type: "uint" }] }])],
      expected: { functions: functions("order((address,uint256))"), methods: ["order"] },
    },
    {
      name: "an array of nested tuples",
      abi: [
        fn("fill", [
          {
            type: "tuple[]",
            components: [
              { type: "address" },
              { type: "tuple", components: [{ type: "bytes32" }, { type: "uint8[]" }] },
            ],
          },
          "uint256",
        ]),
      ],
      expected: { functions: functions("fill((address,(bytes32,uint8[]))[],uint256)"), methods: ["fill"] },
    },
    {
      name: "events, errors, constructor, fallback and receive are no methods",
      abi: [
        { type: "constructor", inputs: [{ type: "address" }] },
        { type: "event", name: "Transfer", inputs: [{ type: "address" }] },
        { type: "error", name: "Nope", inputs: [] },
        { type: "fallback" },
        { type: "receive" },
        fn("mint", ["uint256"]),
      ],
      expected: { functions: functions("mint(uint256)"), methods: ["mint"] },
    },
    {
      name: "methods in ABI order",
      abi: [fn("b"), fn("a"), fn("b", ["uint256"])],
      expected: { functions: functions("b()", "a()", "b(uint256)"), methods: ["b", "a"] },
    },
    { name: "an empty ABI", abi: [], expected: { functions: [], methods: [] } },
  ];
  for (const { name, abi, expected } of cases) {
    test(name, () => assert.deepEqual(parseContractAbi(JSON.stringify(abi)), expected));
  }

  test("transfer(address,uint256) is 0xa9059cbb", () => {
    assert.equal(
      parseContractAbi(JSON.stringify([fn("transfer", ["address", "uint256"])])).functions[0]?.selector,
      "0xa9059cbb",
    );
  });
});

describe("parseContractAbi refuses, saying where", () => {
  const cases: { name: string; text: string; expected: string }[] = [
    { name: "not JSON", text: "[{", expected: "abi must be a JSON string of an ABI array" },
    { name: "a JSON object", text: "{}", expected: "abi must be a JSON array of ABI items" },
    { name: "JSON null", text: "null", expected: "abi must be a JSON array of ABI items" },
    { name: "an item that is a string", text: '["mint()"]', expected: "abi[0] must be an object" },
    { name: "an item that is null", text: '[{"name":"a"}, null]', expected: "abi[1] must be an object" },
    { name: "an item that is an array", text: "[[]]", expected: "abi[0] must be an object" },
    {
      name: "an unknown item type",
      text: '[{"type":"method","name":"a"}]',
      expected: "abi[0].type must be one of function, event, error, constructor, fallback, receive",
    },
    {
      name: "a type that is not a string",
      text: '[{"type":1,"name":"a"}]',
      expected: "abi[0].type must be one of function, event, error, constructor, fallback, receive",
    },
    {
      name: "a function without a name",
      text: '[{"type":"function"}]',
      expected: "abi[0].name must be a function name",
    },
    {
      name: "a name with a parenthesis",
      text: '[{"type":"function","name":"mint(uint256)"}]',
      expected: "abi[0].name must be a function name",
    },
    { name: "a name starting with a digit", text: '[{"name":"1a"}]', expected: "abi[0].name must be a function name" },
    { name: "inputs not an array", text: '[{"name":"a","inputs":{}}]', expected: "abi[0].inputs must be an array" },
    {
      name: "an input that is a string",
      text: '[{"name":"a","inputs":["uint256"]}]',
      expected: "abi[0].inputs[0] must be an object",
    },
    {
      name: "an input without a type",
      text: '[{"name":"a","inputs":[{"name":"x"}]}]',
      expected: "abi[0].inputs[0].type must be a string",
    },
    {
      name: "uint7",
      text: '[{"name":"a"},{"name":"b","inputs":[{"type":"uint256"},{"type":"uint7"}]}]',
      expected: 'abi[1].inputs[1].type "uint7" is not a Solidity ABI type',
    },
    {
      name: "bytes33",
      text: '[{"name":"a","inputs":[{"type":"bytes33"}]}]',
      expected: 'abi[0].inputs[0].type "bytes33" is not a Solidity ABI type',
    },
    {
      name: "bytes0",
      text: '[{"name":"a","inputs":[{"type":"bytes0"}]}]',
      expected: 'abi[0].inputs[0].type "bytes0" is not a Solidity ABI type',
    },
    {
      name: "an array of length 0",
      text: '[{"name":"a","inputs":[{"type":"uint256[0]"}]}]',
      expected: 'abi[0].inputs[0].type "uint256[0]" is not a Solidity ABI type',
    },
    {
      name: "a type in upper case",
      text: '[{"name":"a","inputs":[{"type":"Address"}]}]',
      expected: 'abi[0].inputs[0].type "Address" is not a Solidity ABI type',
    },
    {
      name: "a tuple without components",
      text: '[{"name":"a","inputs":[{"type":"tuple"}]}]',
      expected: "abi[0].inputs[0].components must be an array",
    },
    {
      name: "a bad type inside a tuple",
      text: '[{"name":"a","inputs":[{"type":"tuple[]","components":[{"type":"address"},{"type":"uint300"}]}]}]',
      expected: 'abi[0].inputs[0].components[1].type "uint300" is not a Solidity ABI type',
    },
  ];
  for (const { name, text, expected } of cases) test(name, () => assertRefused(() => parseContractAbi(text), expected));
});

describe("checkWhitelistedMethods", () => {
  const abi = parseContractAbi(JSON.stringify([fn("mint", ["uint256"]), fn("mint", []), fn("burn", ["uint256"])]));
  const accepted: { name: string; input: string[] }[] = [
    { name: "none", input: [] },
    { name: "an overloaded name (all its overloads)", input: ["mint"] },
    { name: "every function", input: ["burn", "mint"] },
  ];
  for (const { name, input } of accepted) test(`accepts ${name}`, () => checkWhitelistedMethods(abi, input));

  const refused: { name: string; input: string[]; expected: string }[] = [
    {
      name: "a name the ABI lacks",
      input: ["transfer"],
      expected: 'whitelistedMethods: "transfer" is not a function of the contract\'s ABI',
    },
    {
      name: "a signature instead of a name",
      input: ["mint(uint256)"],
      expected: 'whitelistedMethods: "mint(uint256)" is not a function of the contract\'s ABI',
    },
    {
      name: "another case",
      input: ["Mint"],
      expected: 'whitelistedMethods: "Mint" is not a function of the contract\'s ABI',
    },
    {
      name: "the first of several missing",
      input: ["mint", "a", "b"],
      expected: 'whitelistedMethods: "a" is not a function of the contract\'s ABI',
    },
  ];
  for (const { name, input, expected } of refused) {
    test(`refuses ${name}`, () => assertRefused(() => checkWhitelistedMethods(abi, input), expected));
  }
});
