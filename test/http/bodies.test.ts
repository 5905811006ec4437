import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { type CallOptions, type Dapp, type Reply, startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
let d: Dapp;
let policyId: string;
let webhookId: string;
/** Every status this file received: none may be a 5xx, whatever was sent. */
const statuses: number[] = [];

const CONTRACT_ADDRESS = "0x00000000000000000000000000000000000000bb";
const ABI = JSON.stringify([{ type: "function", name: "mint", inputs: [{ type: "uint256" }] }]);
const LIMIT = 64 * 1024;
/** A rule's creation and update take more (a sender list of 100,000 addresses): src/http/policies.ts. */
const RULE_LIMIT = 8 * 1024 * 1024;
const tooLarge = (limit: number) => `Request body is larger than the limit of ${limit} bytes`;
const NOT_JSON_TYPE = "Content-Type must be application/json";
const NOT_JSON = "Request body is not valid JSON";
const POISONED = "Request body must not contain __proto__ or constructor.prototype keys";
const NUL = "Text in the request body must not contain the NUL character (\\u0000)";

async function call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  const reply = await t.call(method, path, options);
  statuses.push(reply.status);
  return reply;
}

function assertError(reply: Reply, status: number, message: string): void {
  assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }]);
}

/** Everything the dApp's account can read back: a refused request must leave all of it as it was. */
async function snapshot() {
  const auth = { token: d.token, apiKey: d.apiKey };
  const lists = await Promise.all([
    t.call("GET", "paymasterParameters", { token: d.token }),
    t.call("GET", "smart-contract", auth),
    t.call("GET", "paymaster-policy", auth),
    t.call("GET", "webhook", auth),
  ]);
  for (const list of lists) assert.equal(list.status, 200, JSON.stringify(list.body));
  return lists.map((list) => list.body.data);
}

before(async () => {
  t = await startTestApp();
  assert.equal(t.ctx.bodyLimitBytes, LIMIT);
  d = await t.dapp();
  const auth = { token: d.token, apiKey: d.apiKey };
  const contract = await t.call("POST", "smart-contract", {
    ...auth,
    body: { name: "token", address: CONTRACT_ADDRESS, abi: ABI },
  });
  assert.equal(contract.status, 200, JSON.stringify(contract.body));
  const policy = await t.call("POST", "paymaster-policy", {
    ...auth,
    body: {
      name: "limit",
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 5, thresholdType: "COUNT" },
    },
  });
  assert.equal(policy.status, 200, JSON.stringify(policy.body));
  policyId = (policy.body.data as { _id: string })._id;
  const webhook = await t.call("POST", "webhook", {
    ...auth,
    body: { webhookUrl: "https://hooks.example.com/verify", requestType: "POST" },
  });
  assert.equal(webhook.status, 200, JSON.stringify(webhook.body));
  webhookId = (webhook.body.data as { webhookId: string }).webhookId;
});
after(() => t.close());

/** The endpoints that take a body, each with a body it would accept. */
interface Endpoint {
  method: string;
  path: string;
  auth: "token" | "both";
  valid: Record<string, unknown>;
  /** Its body limit, when not the service's general one. */
  limit?: number;
}

function endpoints(): Endpoint[] {
  return [
    {
      method: "POST",
      path: "paymasterParameters",
      auth: "token",
      valid: { name: "new dapp", type: "HYBRID", chainId: 31337, version: "1.0.0" },
    },
    {
      method: "PATCH",
      path: "paymasterParameters",
      auth: "both",
      valid: { paymasterId: d.paymasterId, type: "paymasterFundingId", signature: "0x00", address: CONTRACT_ADDRESS },
    },
    {
      method: "POST",
      path: "smart-contract",
      auth: "both",
      valid: { name: "other", address: "0x00000000000000000000000000000000000000cc", abi: ABI },
    },
    {
      method: "PATCH",
      path: "smart-contract",
      auth: "both",
      valid: { address: CONTRACT_ADDRESS, whitelistedMethods: [] },
    },
    { method: "DELETE", path: "smart-contract", auth: "both", valid: { address: CONTRACT_ADDRESS } },
    {
      method: "POST",
      path: "paymaster-policy",
      auth: "both",
      valid: { name: "deploy", policyType: "WALLET_DEPLOYMENT", policyData: {} },
      limit: RULE_LIMIT,
    },
    { method: "PATCH", path: `paymaster-policy/limit/${policyId}`, auth: "both", valid: { threshold: 9 } },
    {
      method: "PATCH",
      path: `paymaster-policy/${policyId}`,
      auth: "both",
      valid: { name: "renamed" },
      limit: RULE_LIMIT,
    },
    {
      method: "POST",
      path: "webhook",
      auth: "both",
      valid: { webhookUrl: "https://hooks.example.com/second", requestType: "GET" },
    },
    { method: "PATCH", path: "webhook", auth: "both", valid: { webhookId, active: false } },
    { method: "DELETE", path: "webhook", auth: "both", valid: { webhookId } },
  ];
}

const headersOf = (auth: "token" | "both") =>
  auth === "token" ? { token: d.token } : { token: d.token, apiKey: d.apiKey };

describe("bad bodies on every endpoint that takes one", () => {
  // Each case builds its body for the endpoint's limit (the general 64 KiB, or a rule route's 8 MiB).
  const cases: [
    string,
    (valid: Record<string, unknown>, limit: number) => CallOptions["raw"],
    string | ((limit: number) => string),
  ][] = [
    [
      "a JSON body half again the limit (~100 KiB over the general 64 KiB)",
      (valid, limit) => ({
        payload: JSON.stringify({ ...valid, padding: "a".repeat(limit * 1.5) }),
        contentType: "application/json",
      }),
      tooLarge,
    ],
    [
      "a body just over the limit",
      (valid, limit) => {
        const json = JSON.stringify({ ...valid, padding: "" });
        return {
          payload: json.replace('"padding":""', `"padding":"${"b".repeat(limit + 1 - json.length)}"`),
          contentType: "application/json",
        };
      },
      tooLarge,
    ],
    [
      "valid JSON sent as text/plain",
      (valid) => ({ payload: JSON.stringify(valid), contentType: "text/plain" }),
      NOT_JSON_TYPE,
    ],
    [
      "a form (application/x-www-form-urlencoded)",
      (valid) => ({
        payload: new URLSearchParams(
          Object.entries(valid).map(([k, v]): [string, string] => [k, String(v)]),
        ).toString(),
        contentType: "application/x-www-form-urlencoded",
      }),
      NOT_JSON_TYPE,
    ],
    [
      "multipart/form-data",
      () => ({ payload: "--x\r\n\r\n--x--", contentType: "multipart/form-data; boundary=x" }),
      NOT_JSON_TYPE,
    ],
    [
      "a JSON look-alike type",
      (valid) => ({ payload: JSON.stringify(valid), contentType: "application/jsonp" }),
      NOT_JSON_TYPE,
    ],
    [
      "truncated JSON",
      (valid) => ({ payload: JSON.stringify(valid).slice(0, -3), contentType: "application/json" }),
      NOT_JSON,
    ],
    ["JSON with single quotes", () => ({ payload: "{'name': 'x'}", contentType: "application/json" }), NOT_JSON],
    [
      "JSON with trailing garbage",
      (valid) => ({ payload: `${JSON.stringify(valid)}}`, contentType: "application/json" }),
      NOT_JSON,
    ],
    ["the word undefined", () => ({ payload: "undefined", contentType: "application/json" }), NOT_JSON],
    [
      "__proto__ at the top",
      (valid) => ({
        payload: `{"__proto__": {"active": true}, ${JSON.stringify(valid).slice(1)}`,
        contentType: "application/json",
      }),
      POISONED,
    ],
    [
      "constructor.prototype at the top",
      (valid) => ({
        payload: `{"constructor": {"prototype": {"admin": true}}, ${JSON.stringify(valid).slice(1)}`,
        contentType: "application/json",
      }),
      POISONED,
    ],
    [
      "__proto__ nested",
      (valid) => ({
        payload: JSON.stringify({ ...valid, extra: { deeper: [{ x: 1 }] } }).replace('"x":1', '"__proto__":{"x":1}'),
        contentType: "application/json",
      }),
      POISONED,
    ],
  ];

  for (const [label, raw, messageOf] of cases) {
    const shown = typeof messageOf === "string" ? messageOf : messageOf(LIMIT);
    test(`${label} → 400 "${shown}" everywhere, and nothing is written`, async () => {
      const before = await snapshot();
      for (const endpoint of endpoints()) {
        const limit = endpoint.limit ?? LIMIT;
        const reply = await call(endpoint.method, endpoint.path, {
          ...headersOf(endpoint.auth),
          raw: raw(endpoint.valid, limit),
        });
        const message = typeof messageOf === "string" ? messageOf : messageOf(limit);
        assert.deepEqual(
          [reply.status, reply.body],
          [400, { statusCode: 400, message }],
          `${endpoint.method} ${endpoint.path}`,
        );
      }
      assert.deepEqual(await snapshot(), before);
    });
  }

  test("a body without a Content-Type is refused", async () => {
    const before = await snapshot();
    for (const endpoint of endpoints()) {
      const response = await t.app.inject({
        method: endpoint.method as "POST",
        url: `${MANAGEMENT_PREFIX}/${endpoint.path}`,
        headers: { authToken: d.token, apiKey: d.apiKey },
        payload: Buffer.from(JSON.stringify(endpoint.valid)),
      });
      statuses.push(response.statusCode);
      assert.deepEqual(
        [response.statusCode, response.json()],
        [400, { statusCode: 400, message: NOT_JSON_TYPE }],
        `${endpoint.method} ${endpoint.path}`,
      );
    }
    assert.deepEqual(await snapshot(), before);
  });

  test("a JSON content type with a charset, or in capitals, is accepted", async () => {
    const auth = { token: d.token, apiKey: d.apiKey };
    for (const contentType of ["application/json; charset=utf-8", "Application/JSON"]) {
      const reply = await call("POST", "webhook", {
        ...auth,
        raw: { payload: JSON.stringify({ webhookUrl: "https://ok.example.com/", requestType: "GET" }), contentType },
      });
      assert.equal(reply.status, 200, `${contentType}: ${JSON.stringify(reply.body)}`);
      const id = (reply.body.data as { webhookId: string }).webhookId;
      assert.equal((await call("DELETE", "webhook", { ...auth, body: { webhookId: id } })).status, 200);
    }
  });

  test("the NUL character in a text field is a 400, not a 500, and nothing is written", async () => {
    const auth = { token: d.token, apiKey: d.apiKey };
    const before = await snapshot();
    for (const [method, path, body] of [
      ["POST", "paymasterParameters", { name: "nul\u0000dapp", type: "HYBRID", chainId: 31337, version: "1.0.0" }],
      [
        "POST",
        "smart-contract",
        { name: "nul\u0000", address: "0x00000000000000000000000000000000000000dd", abi: ABI },
      ],
      ["POST", "paymaster-policy", { name: "a\u0000b", policyType: "WALLET_DEPLOYMENT", policyData: {} }],
      ["PATCH", `paymaster-policy/limit/${policyId}`, { name: "renamed\u0000" }],
    ] as const) {
      const reply = await call(method, path, { ...auth, body });
      assertError(reply, 400, NUL);
    }
    assert.deepEqual(await snapshot(), before);
  });

  test("a number too large for a double (1e400 is Infinity) is refused as a threshold", async () => {
    const before = await snapshot();
    const reply = await call("PATCH", `paymaster-policy/limit/${policyId}`, {
      token: d.token,
      apiKey: d.apiKey,
      raw: { payload: '{"threshold": 1e400}', contentType: "application/json" },
    });
    // Infinity is positive; what is wrong with it is its size.
    assertError(reply, 400, "threshold must be at most 1000000000000000");
    assert.deepEqual(await snapshot(), before);
  });

  test("deeply nested JSON is refused with a 400", async () => {
    const before = await snapshot();
    const depth = 20_000;
    for (const payload of ["[".repeat(depth) + "]".repeat(depth), `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`]) {
      const reply = await call("POST", "webhook", {
        token: d.token,
        apiKey: d.apiKey,
        raw: { payload, contentType: "application/json" },
      });
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.deepEqual(Object.keys(reply.body).sort(), ["message", "statusCode"]);
    }
    assert.deepEqual(await snapshot(), before);
  });
});

describe("routes and URLs", () => {
  test("an unknown route, or a known path with another method, is a 404 envelope", async () => {
    for (const [method, path] of [
      ["GET", "nope"],
      ["POST", "paymaster-policies"],
      ["PUT", "webhook"],
      ["DELETE", "paymaster-policy"],
      ["GET", `paymaster-policy/limit/${policyId}`],
      ["PATCH", "paymaster-policy/pause/x"],
    ] as const) {
      const reply = await call(method, path, { token: d.token, apiKey: d.apiKey });
      assertError(reply, 404, `Route not found: ${method} ${MANAGEMENT_PREFIX}/${path}`);
    }
    const outside = await t.app.inject({ method: "GET", url: "/nope?x=1" });
    statuses.push(outside.statusCode);
    assert.deepEqual(
      [outside.statusCode, outside.json()],
      [404, { statusCode: 404, message: "Route not found: GET /nope?x=1" }],
    );
  });

  test("a badly percent-encoded path gets the 400 envelope, not Fastify's own body", async () => {
    const path = `${MANAGEMENT_PREFIX}/paymaster-policy/limit/%E0%A4%A`;
    const response = await t.app.inject({
      method: "PATCH",
      url: path,
      headers: { authToken: d.token, apiKey: d.apiKey },
    });
    statuses.push(response.statusCode);
    assert.deepEqual(
      [response.statusCode, response.json()],
      [400, { statusCode: 400, message: `'${path}' is not a valid url component` }],
    );
  });

  test("a policy id longer than the router's default limit is an unknown id (404), not a 414", async () => {
    const reply = await call("PATCH", `paymaster-policy/activate/${"a".repeat(500)}`, {
      token: d.token,
      apiKey: d.apiKey,
    });
    assertError(reply, 404, "Policy not found");
  });
});

describe("over real HTTP", () => {
  test("a create and a bad request through a listening server", async () => {
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = t.app.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}${MANAGEMENT_PREFIX}/webhook`;
    const headers = { authToken: d.token, apiKey: d.apiKey };
    const before = await snapshot();

    const createResponse = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ webhookUrl: "https://live.example.com/hook", requestType: "POST" }),
    });
    statuses.push(createResponse.status);
    assert.equal(createResponse.status, 200);
    assert.match(createResponse.headers.get("content-type") ?? "", /^application\/json/);
    const created = (await createResponse.json()) as {
      statusCode: number;
      message: string;
      data: { webhookId: string };
    };
    assert.deepEqual(created, {
      statusCode: 200,
      message: "Webhook created",
      data: {
        webhookId: created.data.webhookId,
        webhookUrl: "https://live.example.com/hook",
        requestType: "POST",
        active: true,
      },
    });

    const bad = await fetch(url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: '{"webhookUrl": "https://live.example.com/other", ',
    });
    statuses.push(bad.status);
    assert.deepEqual([bad.status, await bad.json()], [400, { statusCode: 400, message: NOT_JSON }]);

    const form = await fetch(url, {
      method: "POST",
      headers,
      body: new URLSearchParams({ webhookUrl: "https://live.example.com/form", requestType: "GET" }),
    });
    statuses.push(form.status);
    assert.deepEqual([form.status, await form.json()], [400, { statusCode: 400, message: NOT_JSON_TYPE }]);

    const [paymasters, contracts, policies, webhooks] = before;
    assert.deepEqual(await snapshot(), [paymasters, contracts, policies, [...(webhooks as unknown[]), created.data]]);
  });
});

test("no request in this file was answered with a 5xx", () => {
  assert.ok(statuses.length > 150, `${statuses.length} requests recorded`);
  assert.deepEqual(
    statuses.filter((status) => status >= 500),
    [],
  );
});
