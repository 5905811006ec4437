import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const create = (token: string | undefined, body: unknown, path = "paymasterParameters") =>
  t.call("POST", path, { token, body });
const valid = { name: "game", type: "HYBRID", chainId: 31337, version: "1.0.0" };

describe("create paymaster (endpoint 2)", () => {
  test("registers a dApp and returns name, chainId, apiKey and paymasterId", async () => {
    const { token } = await t.account();
    const reply = await create(token, valid);
    assert.equal(reply.status, 200);
    assert.equal(reply.body.statusCode, 200);
    assert.equal(reply.body.message, "DApp registered successfully");
    const data = reply.body.data as Record<string, unknown>;
    assert.equal(data.name, "game");
    assert.equal(data.chainId, 31337);
    assert.match(data.apiKey as string, /^[A-Za-z0-9_-]{32}$/);
    assert.match(data.paymasterId as string, /^[0-9a-f-]{36}$/);
  });

  test("the same name on the same chain is refused, on another chain or for another account it is not", async () => {
    const { token } = await t.account();
    assert.equal((await create(token, valid)).status, 200);
    const again = await create(token, valid);
    assert.deepEqual([again.status, again.body], [400, { statusCode: 400, message: "paymaster_name_exists" }]);
    assert.equal((await create(token, { ...valid, chainId: 80002 })).status, 200);
    const other = await t.account();
    assert.equal((await create(other.token, valid)).status, 200);
  });

  test("an unsupported chain is refused", async () => {
    const { token } = await t.account();
    const reply = await create(token, { ...valid, chainId: 1 });
    assert.deepEqual([reply.status, reply.body.message], [400, "Chain ID not supported"]);
  });

  test("the public service's path `paymaster` serves the same handlers", async () => {
    const { token } = await t.account();
    assert.equal((await create(token, valid, "paymaster")).status, 200);
    const list = await t.call("GET", "paymaster", { token });
    assert.equal((list.body.data as unknown[]).length, 1);
    const again = await create(token, valid, "paymasterParameters");
    assert.equal(again.body.message, "paymaster_name_exists");
  });

  for (const [field, value, message] of [
    ["name", undefined, "name is required"],
    ["name", 42, "name must be a string"],
    ["name", "  ", "name must not be empty"],
    ["name", "x".repeat(101), "name must be at most 100 characters"],
    ["type", undefined, "type is required"],
    ["type", "SPONSORED", "type must be HYBRID"],
    ["chainId", undefined, "chainId is required"],
    ["chainId", "31337", "chainId must be an integer"],
    ["chainId", 1.5, "chainId must be an integer"],
    ["version", undefined, "version is required"],
    ["version", 1, "version must be a string"],
  ] as const) {
    test(`bad input: ${field} = ${JSON.stringify(value)?.slice(0, 20)} → "${message}"`, async () => {
      const { token } = await t.account();
      const reply = await create(token, { ...valid, [field]: value });
      assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message }]);
      const list = await t.call("GET", "paymasterParameters", { token });
      assert.deepEqual(list.body.data, [], "a refused create writes nothing");
    });
  }

  test("a body that is not an object is refused", async () => {
    const { token } = await t.account();
    for (const body of [[1, 2], "text", 7, null]) {
      const reply = await create(token, body);
      assert.deepEqual([reply.status, reply.body.message], [400, "Request body must be a JSON object"]);
    }
    const none = await t.call("POST", "paymasterParameters", { token });
    assert.deepEqual([none.status, none.body.message], [400, "Request body must be a JSON object"]);
  });
});

describe("list paymasters (endpoint 1)", () => {
  test("lists the account's paymasters only, in creation order", async () => {
    const { token } = await t.account();
    await create(token, { ...valid, name: "first" });
    await create(token, { ...valid, name: "second", chainId: 80002 });
    const other = await t.account();
    await create(other.token, { ...valid, name: "foreign" });
    const reply = await t.call("GET", "paymasterParameters", { token });
    assert.equal(reply.status, 200);
    assert.equal(reply.body.message, "DApp list fetched");
    const data = reply.body.data as { name: string; chainId: number; apiKey: string; fundingWalletAddress: unknown }[];
    assert.deepEqual(
      data.map((p) => [p.name, p.chainId, p.fundingWalletAddress]),
      [
        ["first", 31337, null],
        ["second", 80002, null],
      ],
    );
  });
});

describe("authentication of endpoints 1 and 2", () => {
  for (const [method, body] of [
    ["GET", undefined],
    ["POST", valid],
  ] as const) {
    test(`${method}: a missing or unknown authToken gets 401 "Auth token is required in the headers"`, async () => {
      for (const token of [undefined, "pm_not-a-real-token"]) {
        const reply = await t.call(method, "paymasterParameters", { token, body });
        assert.deepEqual(
          [reply.status, reply.body],
          [401, { statusCode: 401, message: "Auth token is required in the headers" }],
        );
      }
    });
  }
});
