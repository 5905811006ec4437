import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Abi, type AbiFunction, toFunctionSelector } from "viem";
import { parseContractAbi } from "../../src/sponsorship/contractAbi";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { missingCredentials } from "../helpers/badCredentials";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const PATH = "smart-contract";

/** A token-like ABI: an overloaded function, an event, an error, a constructor, fallback, receive and a tuple input. */
const ABI = [
  { type: "constructor", inputs: [{ name: "owner", type: "address" }], stateMutability: "nonpayable" },
  {
    type: "function",
    name: "transfer",
    inputs: [
      { name: "to", type: "address" },
      { name: "amount", type: "uint256" },
    ],
    outputs: [{ name: "", type: "bool" }],
    stateMutability: "nonpayable",
  },
  {
    type: "event",
    name: "Transfer",
    inputs: [
      { name: "from", type: "address", indexed: true },
      { name: "to", type: "address", indexed: true },
      { name: "value", type: "uint256", indexed: false },
    ],
    anonymous: false,
  },
  {
    type: "function",
    name: "approve",
    inputs: [
      { name: "spender", type: "address" },
      { name: "amount", type: "uint" },
    ],
    outputs: [{ name: "", type: "bool" }],
    stateMutability: "nonpayable",
  },
  {
    type: "function",
    name: "transfer",
    inputs: [
      { name: "to", type: "address" },
      { name: "amount", type: "uint256" },
      { name: "data", type: "bytes" },
    ],
    outputs: [],
    stateMutability: "nonpayable",
  },
  { type: "error", name: "Unauthorized", inputs: [{ name: "who", type: "address" }] },
  {
    type: "function",
    name: "mintBatch",
    inputs: [
      {
        name: "orders",
        type: "tuple[]",
        components: [
          { name: "to", type: "address" },
          { name: "amount", type: "uint96" },
          { name: "extra", type: "tuple", components: [{ name: "tags", type: "bytes32[2]" }] },
        ],
      },
    ],
    outputs: [],
    stateMutability: "nonpayable",
  },
  { type: "fallback", stateMutability: "payable" },
  { type: "receive", stateMutability: "payable" },
];
const ABI_TEXT = JSON.stringify(ABI);
const ALL_METHODS = ["transfer", "approve", "mintBatch"];

let addressCounter = 0x1000;
/** A fresh checksum-looking (mixed case) address for each contract, so that lowercasing is visible. */
const newAddress = () => `0xAbCdEf${(++addressCounter).toString(16).padStart(34, "0")}`;

interface ContractView {
  name: string;
  address: string;
  abi: string;
  whitelistedMethods: string[];
  methods: string[];
}

const as = (dapp: Dapp) => ({ token: dapp.token, apiKey: dapp.apiKey });

async function list(dapp: Dapp): Promise<ContractView[]> {
  const reply = await t.call("GET", PATH, as(dapp));
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Smart contract list fetched");
  return reply.body.data as ContractView[];
}

async function register(dapp: Dapp, body: Record<string, unknown>): Promise<void> {
  const reply = await t.call("POST", PATH, { ...as(dapp), body });
  assert.deepEqual(
    [reply.status, reply.body],
    [200, { statusCode: 200, message: "Smart contract registered successfully" }],
    JSON.stringify(reply.body),
  );
}

/** A dApp with one registered contract (every method whitelisted). */
async function dappWithContract(): Promise<{ dapp: Dapp; address: string; name: string }> {
  const dapp = await t.dapp();
  const address = newAddress();
  const name = `token-${addressCounter}`;
  await register(dapp, { name, address, abi: ABI_TEXT });
  return { dapp, address, name };
}

/** Sends a request that must be refused with exactly this status and message, and must leave the dApp's list as it was. */
async function refused(
  dapp: Dapp,
  method: string,
  options: { body?: unknown; raw?: { payload: string; contentType: string }; token?: string; apiKey?: string },
  status: number,
  message: string,
): Promise<void> {
  const before = await list(dapp);
  const reply = await t.call(method, PATH, { ...as(dapp), ...options });
  assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }]);
  assert.deepEqual(await list(dapp), before, "a refused request writes nothing");
}

describe("register a smart contract (endpoint 3)", () => {
  test("stores name, lowercased address, the ABI text as sent, all ABI function names as methods", async () => {
    const dapp = await t.dapp();
    const address = newAddress();
    await register(dapp, { name: "token", address, abi: ABI_TEXT });
    assert.deepEqual(await list(dapp), [
      {
        name: "token",
        address: address.toLowerCase(),
        abi: ABI_TEXT,
        whitelistedMethods: ALL_METHODS,
        methods: ALL_METHODS,
      },
    ]);
  });

  test("the success body is the envelope only, without data", async () => {
    const dapp = await t.dapp();
    const reply = await t.call("POST", PATH, {
      ...as(dapp),
      body: { name: "c", address: newAddress(), abi: ABI_TEXT },
    });
    assert.equal(reply.status, 200);
    assert.deepEqual(reply.body, { statusCode: 200, message: "Smart contract registered successfully" });
  });

  test("whitelistedMethods: a subset is stored as given, an empty array means none, repeats count once", async () => {
    const dapp = await t.dapp();
    const [a, b, c] = [newAddress(), newAddress(), newAddress()];
    await register(dapp, { name: "subset", address: a, abi: ABI_TEXT, whitelistedMethods: ["approve", "transfer"] });
    await register(dapp, { name: "none", address: b, abi: ABI_TEXT, whitelistedMethods: [] });
    await register(dapp, { name: "repeat", address: c, abi: ABI_TEXT, whitelistedMethods: ["approve", "approve"] });
    const contracts = await list(dapp);
    assert.deepEqual(
      contracts.map((contract) => [contract.name, contract.whitelistedMethods, contract.methods]),
      [
        ["subset", ["approve", "transfer"], ALL_METHODS],
        ["none", [], ALL_METHODS],
        ["repeat", ["approve"], ALL_METHODS],
      ],
    );
  });

  test("an ABI without functions has no methods, and nothing is whitelisted when the field is omitted", async () => {
    const dapp = await t.dapp();
    const abi = JSON.stringify([{ type: "event", name: "Ping", inputs: [] }]);
    await register(dapp, { name: "events-only", address: newAddress(), abi });
    const [contract] = await list(dapp);
    assert.deepEqual([contract?.methods, contract?.whitelistedMethods], [[], []]);
  });

  test("ABI items without a type are functions (the JSON ABI default)", async () => {
    const dapp = await t.dapp();
    const abi = JSON.stringify([{ name: "ping", inputs: [] }, { name: "pong" }]);
    await register(dapp, { name: "untyped", address: newAddress(), abi });
    assert.deepEqual((await list(dapp))[0]?.methods, ["ping", "pong"]);
  });

  test("the selectors of the parsed ABI match viem's, overloads and tuples included", () => {
    const parsed = parseContractAbi(ABI_TEXT);
    // viem hashes `uint` as written; in a selector it is `uint256` (0x095ea7b3 is ERC-20's approve).
    const canonicalAbi = JSON.parse(ABI_TEXT.replaceAll('"uint"', '"uint256"')) as Abi;
    const functions = canonicalAbi.filter((item): item is AbiFunction => item.type === "function");
    assert.deepEqual(
      parsed.functions.map((f) => f.selector),
      functions.map((item) => toFunctionSelector(item)),
    );
    assert.deepEqual(parsed.functions.map((f) => f.selector).slice(0, 2), ["0xa9059cbb", "0x095ea7b3"]);
    assert.equal(parsed.functions[1]?.signature, "approve(address,uint256)");
    assert.equal(parsed.functions[3]?.signature, "mintBatch((address,uint96,(bytes32[2]))[])");
  });

  for (const [whitelistedMethods, message] of [
    [["approve", "burn"], 'whitelistedMethods: "burn" is not a function of the contract\'s ABI'],
    [["Transfer"], 'whitelistedMethods: "Transfer" is not a function of the contract\'s ABI'],
    [["Unauthorized"], 'whitelistedMethods: "Unauthorized" is not a function of the contract\'s ABI'],
    [
      ["transfer(address,uint256)"],
      'whitelistedMethods: "transfer(address,uint256)" is not a function of the contract\'s ABI',
    ],
    [["APPROVE"], 'whitelistedMethods: "APPROVE" is not a function of the contract\'s ABI'],
    ["approve", "whitelistedMethods must be an array"],
    [{ 0: "approve" }, "whitelistedMethods must be an array"],
    [null, "whitelistedMethods must be an array"],
    [7, "whitelistedMethods must be an array"],
    [["approve", 3], "whitelistedMethods[1] must be a string"],
    [[null], "whitelistedMethods[0] must be a string"],
  ] as const) {
    test(`whitelistedMethods = ${JSON.stringify(whitelistedMethods)} is refused: ${message}`, async () => {
      const dapp = await t.dapp();
      await refused(
        dapp,
        "POST",
        { body: { name: "c", address: newAddress(), abi: ABI_TEXT, whitelistedMethods } },
        400,
        message,
      );
      assert.deepEqual(await list(dapp), []);
    });
  }

  const ADDRESS_MESSAGE = "address must be an address: 0x followed by 40 hex digits";
  for (const [label, body, message] of [
    ["name missing", { address: `0x${"1".repeat(40)}`, abi: ABI_TEXT }, "name is required"],
    ["name null", { name: null, address: `0x${"1".repeat(40)}`, abi: ABI_TEXT }, "name is required"],
    ["name a number", { name: 5, address: `0x${"1".repeat(40)}`, abi: ABI_TEXT }, "name must be a string"],
    ["name blank", { name: " ", address: `0x${"1".repeat(40)}`, abi: ABI_TEXT }, "name must not be empty"],
    [
      "name too long",
      { name: "n".repeat(101), address: `0x${"1".repeat(40)}`, abi: ABI_TEXT },
      "name must be at most 100 characters",
    ],
    ["address missing", { name: "c", abi: ABI_TEXT }, "address is required"],
    ["address a number", { name: "c", address: 1, abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["address too short", { name: "c", address: "0x1234", abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["address too long", { name: "c", address: `0x${"1".repeat(41)}`, abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["address without 0x", { name: "c", address: "1".repeat(40), abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["address not hex", { name: "c", address: `0x${"g".repeat(40)}`, abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["address with spaces", { name: "c", address: ` 0x${"1".repeat(40)}`, abi: ABI_TEXT }, ADDRESS_MESSAGE],
    ["abi missing", { name: "c", address: `0x${"1".repeat(40)}` }, "abi is required"],
    ["abi an array, not a string", { name: "c", address: `0x${"1".repeat(40)}`, abi: ABI }, "abi must be a string"],
    ["abi empty", { name: "c", address: `0x${"1".repeat(40)}`, abi: "" }, "abi must not be empty"],
  ] as const) {
    test(`bad input: ${label} → "${message}"`, async () => {
      const dapp = await t.dapp();
      await refused(dapp, "POST", { body }, 400, message);
      assert.deepEqual(await list(dapp), []);
    });
  }

  const fn = (inputs: unknown) => ({ type: "function", name: "f", inputs });
  for (const [label, abi, message] of [
    ["not JSON", "transfer(address,uint256)", "abi must be a JSON string of an ABI array"],
    ["truncated JSON", ABI_TEXT.slice(0, -1), "abi must be a JSON string of an ABI array"],
    ["a JSON object", JSON.stringify({ abi: ABI }), "abi must be a JSON array of ABI items"],
    ["a JSON string", JSON.stringify(ABI_TEXT), "abi must be a JSON array of ABI items"],
    ["a JSON null", "null", "abi must be a JSON array of ABI items"],
    ["an item that is a number", "[1]", "abi[0] must be an object"],
    ["an item that is null", JSON.stringify([ABI[1], null]), "abi[1] must be an object"],
    ["an item that is an array", JSON.stringify([ABI[1], ABI[3], []]), "abi[2] must be an object"],
    [
      "an unknown item type",
      JSON.stringify([{ type: "method", name: "f", inputs: [] }]),
      "abi[0].type must be one of function, event, error, constructor, fallback, receive",
    ],
    [
      "an item type that is not a string",
      JSON.stringify([{ type: 1, name: "f" }]),
      "abi[0].type must be one of function, event, error, constructor, fallback, receive",
    ],
    [
      "a function without a name",
      JSON.stringify([{ type: "function", inputs: [] }]),
      "abi[0].name must be a function name",
    ],
    [
      "a function name that is not an identifier",
      JSON.stringify([{ type: "function", name: "transfer(address)", inputs: [] }]),
      "abi[0].name must be a function name",
    ],
    ["inputs that are not an array", JSON.stringify([fn({ type: "address" })]), "abi[0].inputs must be an array"],
    ["an input that is not an object", JSON.stringify([fn(["address"])]), "abi[0].inputs[0] must be an object"],
    ["an input without a type", JSON.stringify([fn([{ name: "to" }])]), "abi[0].inputs[0].type must be a string"],
    [
      "an input of a made-up type",
      JSON.stringify([fn([{ type: "address" }, { type: "uint7" }])]),
      'abi[0].inputs[1].type "uint7" is not a Solidity ABI type',
    ],
    [
      "bytes33",
      JSON.stringify([fn([{ type: "bytes33" }])]),
      'abi[0].inputs[0].type "bytes33" is not a Solidity ABI type',
    ],
    [
      "uint257",
      JSON.stringify([fn([{ type: "uint257" }])]),
      'abi[0].inputs[0].type "uint257" is not a Solidity ABI type',
    ],
    [
      "a zero-length array",
      JSON.stringify([fn([{ type: "uint256[0]" }])]),
      'abi[0].inputs[0].type "uint256[0]" is not a Solidity ABI type',
    ],
    [
      "a malformed array suffix",
      JSON.stringify([fn([{ type: "address[" }])]),
      'abi[0].inputs[0].type "address[" is not a Solidity ABI type',
    ],
    [
      "a tuple without components",
      JSON.stringify([fn([{ type: "tuple" }])]),
      "abi[0].inputs[0].components must be an array",
    ],
    [
      "a tuple whose component has a bad type",
      JSON.stringify([fn([{ type: "tuple[]", components: [{ type: "address" }, { type: "uint9" }] }])]),
      'abi[0].inputs[0].components[1].type "uint9" is not a Solidity ABI type',
    ],
    [
      "a nested tuple whose component is not an object",
      JSON.stringify([fn([{ type: "tuple", components: [{ type: "tuple", components: [7] }] }])]),
      "abi[0].inputs[0].components[0].components[0] must be an object",
    ],
    [
      "a bad item after good ones",
      JSON.stringify([...ABI, fn([{ type: "addr" }])]),
      `abi[${ABI.length}].inputs[0].type "addr" is not a Solidity ABI type`,
    ],
  ] as const) {
    test(`bad ABI: ${label} → "${message}"`, async () => {
      const dapp = await t.dapp();
      await refused(dapp, "POST", { body: { name: "c", address: newAddress(), abi } }, 400, message);
      assert.deepEqual(await list(dapp), []);
    });
  }

  test("a body that is not a JSON object, not JSON, or not sent as JSON is refused", async () => {
    const dapp = await t.dapp();
    for (const body of [[1], "text", 3, null]) {
      await refused(dapp, "POST", { body }, 400, "Request body must be a JSON object");
    }
    await refused(dapp, "POST", {}, 400, "Request body must be a JSON object");
    await refused(
      dapp,
      "POST",
      { raw: { payload: '{"name": "c",', contentType: "application/json" } },
      400,
      "Request body is not valid JSON",
    );
    await refused(
      dapp,
      "POST",
      { raw: { payload: "name=c", contentType: "application/x-www-form-urlencoded" } },
      400,
      "Content-Type must be application/json",
    );
    assert.deepEqual(await list(dapp), []);
  });

  test("a name with a NUL character is a 400, not a 500", async () => {
    const dapp = await t.dapp();
    await refused(
      dapp,
      "POST",
      { body: { name: "a\u0000b", address: newAddress(), abi: ABI_TEXT } },
      400,
      "Text in the request body must not contain the NUL character (\\u0000)",
    );
  });

  test("an address already registered for the dApp is refused, whatever its letter case", async () => {
    const { dapp, address } = await dappWithContract();
    const hex = address.slice(2);
    for (const again of [address, address.toLowerCase(), `0x${hex.toUpperCase()}`]) {
      await refused(
        dapp,
        "POST",
        { body: { name: `other-${again}`, address: again, abi: ABI_TEXT, whitelistedMethods: [] } },
        400,
        "Smart contract address already exists",
      );
    }
    assert.equal((await list(dapp)).length, 1);
  });

  test("concurrent registrations of one address: exactly one succeeds, the others are refused", async () => {
    const dapp = await t.dapp();
    const address = newAddress();
    const replies = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        t.call("POST", PATH, {
          ...as(dapp),
          body: { name: `race-${i}`, address: i % 2 ? address.toLowerCase() : address, abi: ABI_TEXT },
        }),
      ),
    );
    assert.deepEqual(replies.map((reply) => reply.status).sort(), [200, 400, 400, 400]);
    for (const reply of replies.filter((r) => r.status === 400)) {
      assert.deepEqual(reply.body, { statusCode: 400, message: "Smart contract address already exists" });
    }
    assert.equal((await list(dapp)).length, 1);
  });

  test("a name already used by another contract of the dApp is refused", async () => {
    const { dapp, name } = await dappWithContract();
    await refused(
      dapp,
      "POST",
      { body: { name, address: newAddress(), abi: ABI_TEXT } },
      400,
      "Smart contract name already exists",
    );
    assert.equal((await list(dapp)).length, 1);
  });

  test("the same contract may be whitelisted by two dApps of one account and by another account's dApp", async () => {
    const { dapp: first, address, name } = await dappWithContract();
    const second = await t.dapp({ token: first.token });
    const foreign = await t.dapp();
    await register(second, { name, address: address.toLowerCase(), abi: ABI_TEXT, whitelistedMethods: ["approve"] });
    await register(foreign, { name, address, abi: ABI_TEXT, whitelistedMethods: [] });
    const view = (whitelistedMethods: string[]) => [
      { name, address: address.toLowerCase(), abi: ABI_TEXT, whitelistedMethods, methods: ALL_METHODS },
    ];
    assert.deepEqual(await list(first), view(ALL_METHODS));
    assert.deepEqual(await list(second), view(["approve"]));
    assert.deepEqual(await list(foreign), view([]));
  });
});

describe("list smart contracts (endpoint 4)", () => {
  test("a new dApp has none", async () => {
    const dapp = await t.dapp();
    const reply = await t.call("GET", PATH, as(dapp));
    assert.deepEqual(
      [reply.status, reply.body],
      [200, { statusCode: 200, message: "Smart contract list fetched", data: [] }],
    );
  });

  test("lists the dApp's own contracts in creation order, not its sibling dApp's", async () => {
    const dapp = await t.dapp();
    const sibling = await t.dapp({ token: dapp.token });
    const [a, b] = [newAddress(), newAddress()];
    await register(dapp, { name: "first", address: a, abi: ABI_TEXT, whitelistedMethods: ["transfer"] });
    await register(sibling, { name: "sibling", address: newAddress(), abi: ABI_TEXT });
    await register(dapp, { name: "second", address: b, abi: ABI_TEXT });
    assert.deepEqual(
      (await list(dapp)).map((c) => [c.name, c.address, c.whitelistedMethods]),
      [
        ["first", a.toLowerCase(), ["transfer"]],
        ["second", b.toLowerCase(), ALL_METHODS],
      ],
    );
    assert.deepEqual(
      (await list(sibling)).map((c) => c.name),
      ["sibling"],
    );
  });
});

describe("update whitelisted methods (endpoint 5)", () => {
  test("replaces the whitelisted methods and returns the updated contract", async () => {
    const { dapp, address, name } = await dappWithContract();
    const reply = await t.call("PATCH", PATH, {
      ...as(dapp),
      body: { address: address.toUpperCase().replace("0X", "0x"), whitelistedMethods: ["mintBatch", "approve"] },
    });
    const updated = {
      name,
      address: address.toLowerCase(),
      abi: ABI_TEXT,
      whitelistedMethods: ["mintBatch", "approve"],
      methods: ALL_METHODS,
    };
    assert.deepEqual(
      [reply.status, reply.body],
      [200, { statusCode: 200, message: "Smart contract updated", data: updated }],
    );
    assert.deepEqual(await list(dapp), [updated]);
  });

  test("an empty array whitelists nothing, and the methods can be whitelisted again later", async () => {
    const { dapp, address } = await dappWithContract();
    const none = await t.call("PATCH", PATH, { ...as(dapp), body: { address, whitelistedMethods: [] } });
    assert.equal(none.status, 200);
    assert.deepEqual((none.body.data as ContractView).whitelistedMethods, []);
    assert.deepEqual((await list(dapp))[0]?.whitelistedMethods, []);
    const all = await t.call("PATCH", PATH, { ...as(dapp), body: { address, whitelistedMethods: ALL_METHODS } });
    assert.equal(all.status, 200);
    assert.deepEqual((await list(dapp))[0]?.whitelistedMethods, ALL_METHODS);
  });

  test("only the dApp's own entry changes when another dApp whitelists the same address", async () => {
    const { dapp, address, name } = await dappWithContract();
    const other = await t.dapp();
    await register(other, { name, address, abi: ABI_TEXT });
    const reply = await t.call("PATCH", PATH, { ...as(other), body: { address, whitelistedMethods: ["approve"] } });
    assert.equal(reply.status, 200);
    assert.deepEqual((await list(other))[0]?.whitelistedMethods, ["approve"]);
    assert.deepEqual((await list(dapp))[0]?.whitelistedMethods, ALL_METHODS);
  });

  for (const [label, whitelistedMethods, message] of [
    ["a string", "approve", "whitelistedMethods must be an array"],
    ["an object", { approve: true }, "whitelistedMethods must be an array"],
    ["missing", undefined, "whitelistedMethods must be an array"],
    ["null", null, "whitelistedMethods must be an array"],
    ["a boolean", true, "whitelistedMethods must be an array"],
    ["an array with a number", ["approve", 1], "whitelistedMethods[1] must be a string"],
    ["an array with an object", [{ name: "approve" }], "whitelistedMethods[0] must be a string"],
    [
      "a name not in the ABI",
      ["approve", "burn"],
      'whitelistedMethods: "burn" is not a function of the contract\'s ABI',
    ],
    ["an event name", ["Transfer"], 'whitelistedMethods: "Transfer" is not a function of the contract\'s ABI'],
  ] as const) {
    test(`whitelistedMethods ${label} is refused: ${message}`, async () => {
      const { dapp, address } = await dappWithContract();
      await refused(dapp, "PATCH", { body: { address, whitelistedMethods } }, 400, message);
    });
  }

  for (const [label, address, message] of [
    ["missing", undefined, "address is required"],
    ["not an address", "0x12", "address must be an address: 0x followed by 40 hex digits"],
    ["a number", 12, "address must be an address: 0x followed by 40 hex digits"],
  ] as const) {
    test(`address ${label} is refused: ${message}`, async () => {
      const { dapp } = await dappWithContract();
      await refused(dapp, "PATCH", { body: { address, whitelistedMethods: [] } }, 400, message);
    });
  }

  test("a body that is not a JSON object is refused", async () => {
    const { dapp } = await dappWithContract();
    for (const body of [["approve"], "approve", undefined]) {
      await refused(dapp, "PATCH", { body }, 400, "Request body must be a JSON object");
    }
  });

  test("an unknown address is `Smart contract not found` with status 400 in the line and the body", async () => {
    const { dapp } = await dappWithContract();
    await refused(
      dapp,
      "PATCH",
      { body: { address: newAddress(), whitelistedMethods: [] } },
      400,
      "Smart contract not found",
    );
  });

  test("another dApp's apiKey, of the same account or of another one, is `Smart contract not found`", async () => {
    const { dapp, address } = await dappWithContract();
    const sibling = await t.dapp({ token: dapp.token });
    const foreign = await t.dapp();
    const body = { address, whitelistedMethods: [] };
    for (const options of [
      { token: dapp.token, apiKey: sibling.apiKey },
      { token: dapp.token, apiKey: foreign.apiKey },
      { token: foreign.token, apiKey: foreign.apiKey },
      { token: foreign.token, apiKey: dapp.apiKey },
    ]) {
      await refused(dapp, "PATCH", { ...options, body }, 400, "Smart contract not found");
    }
    assert.deepEqual((await list(dapp))[0]?.whitelistedMethods, ALL_METHODS);
    assert.deepEqual(await list(sibling), []);
    assert.deepEqual(await list(foreign), []);
  });
});

describe("delete a smart contract (endpoint 7)", () => {
  test("deletes the contract by address in any letter case; the others stay", async () => {
    const { dapp, address } = await dappWithContract();
    const kept = newAddress();
    await register(dapp, { name: "kept", address: kept, abi: ABI_TEXT });
    const reply = await t.call("DELETE", PATH, { ...as(dapp), body: { address: address.toLowerCase() } });
    assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Smart contract deleted" }]);
    assert.deepEqual(
      (await list(dapp)).map((c) => c.address),
      [kept.toLowerCase()],
    );
    const upper = await t.call("DELETE", PATH, { ...as(dapp), body: { address: `0x${kept.slice(2).toUpperCase()}` } });
    assert.equal(upper.status, 200);
    assert.deepEqual(await list(dapp), []);
  });

  test("a deleted contract is gone: deleting or updating it again is not found, registering it again works", async () => {
    const { dapp, address, name } = await dappWithContract();
    assert.equal((await t.call("DELETE", PATH, { ...as(dapp), body: { address } })).status, 200);
    await refused(dapp, "DELETE", { body: { address } }, 400, "Smart contract not found");
    await refused(dapp, "PATCH", { body: { address, whitelistedMethods: [] } }, 400, "Smart contract not found");
    await register(dapp, { name, address, abi: ABI_TEXT, whitelistedMethods: ["approve"] });
    assert.deepEqual((await list(dapp))[0]?.whitelistedMethods, ["approve"]);
  });

  test("deleting one dApp's entry leaves another dApp's entry for the same address", async () => {
    const { dapp, address, name } = await dappWithContract();
    const other = await t.dapp();
    await register(other, { name, address, abi: ABI_TEXT });
    assert.equal((await t.call("DELETE", PATH, { ...as(other), body: { address } })).status, 200);
    assert.deepEqual(await list(other), []);
    assert.equal((await list(dapp)).length, 1);
  });

  test("an unknown address is `Smart contract not found` (400)", async () => {
    const { dapp } = await dappWithContract();
    await refused(dapp, "DELETE", { body: { address: newAddress() } }, 400, "Smart contract not found");
  });

  test("another dApp's apiKey, of the same account or of another one, is `Smart contract not found`", async () => {
    const { dapp, address } = await dappWithContract();
    const sibling = await t.dapp({ token: dapp.token });
    const foreign = await t.dapp();
    for (const options of [
      { token: dapp.token, apiKey: sibling.apiKey },
      { token: dapp.token, apiKey: foreign.apiKey },
      { token: foreign.token, apiKey: foreign.apiKey },
      { token: foreign.token, apiKey: dapp.apiKey },
    ]) {
      await refused(dapp, "DELETE", { ...options, body: { address } }, 400, "Smart contract not found");
    }
    assert.equal((await list(dapp)).length, 1);
  });

  for (const [label, body, message] of [
    ["no body", undefined, "Request body must be a JSON object"],
    ["an array body", [1], "Request body must be a JSON object"],
    ["address missing", {}, "address is required"],
    ["address not an address", { address: "token" }, "address must be an address: 0x followed by 40 hex digits"],
    [
      "address an array",
      { address: [`0x${"1".repeat(40)}`] },
      "address must be an address: 0x followed by 40 hex digits",
    ],
  ] as const) {
    test(`bad input: ${label} → "${message}"`, async () => {
      const { dapp } = await dappWithContract();
      await refused(dapp, "DELETE", { body }, 400, message);
    });
  }
});

describe("authentication of endpoints 3, 4, 5 and 7", () => {
  const MISSING = "Auth token and API key is required in the headers";
  for (const method of ["POST", "GET", "PATCH", "DELETE"]) {
    test(`${method}: missing or unknown headers get 401 "${MISSING}"`, async () => {
      const { dapp, address } = await dappWithContract();
      const body =
        method === "POST"
          ? { name: "x", address: newAddress(), abi: ABI_TEXT }
          : method === "GET"
            ? undefined
            : { address, whitelistedMethods: [] };
      // Not the other wrong credentials: an unknown or foreign apiKey on update and delete is 400 Smart contract not
      // found, as docs/management-api.md says.
      for (const headers of [...missingCredentials(dapp), { token: "pm_unknown", apiKey: dapp.apiKey }]) {
        await refused(dapp, method, { ...headers, body }, 401, MISSING);
      }
    });
  }
});
