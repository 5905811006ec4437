import assert from "node:assert/strict";
import { test } from "node:test";
import { appWithDapp } from "../helpers/appWithDapp";

/** Under /api/v1/ every answer is a JSON-RPC envelope, even for URLs the router cannot decode or does not know. */
const { t, dapp: d } = appWithDapp();

const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_sponsorUserOperation", params: [] });

async function post(url: string, method: "POST" | "GET" | "PUT" = "POST") {
  const response = await t().app.inject({
    method,
    url,
    headers: { "content-type": "application/json" },
    payload: method === "GET" ? undefined : call,
  });
  return { status: response.statusCode, headers: response.headers, body: response.json() };
}

for (const bad of ["%FF", "%C0%80", "%ED%A0%80", "%E0%A4%A", "a%ZZb"]) {
  test(`a badly percent-encoded apiKey (${bad}) is a JSON-RPC invalid request, with CORS`, async () => {
    const reply = await post(`/api/v1/31337/${bad}`);
    assert.equal(reply.status, 400);
    assert.deepEqual(reply.body, {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid request: '/api/v1/31337/[redacted]' is not a valid url component" },
    });
    assert.equal(reply.headers["access-control-allow-origin"], "*");
  });
}

test("a badly encoded chain id is one too, and shows no key", async () => {
  const reply = await post(`/api/v1/%FF/${d().apiKey}`);
  assert.equal(reply.status, 400);
  assert.equal(reply.body.error.code, -32600);
  assert.doesNotMatch(JSON.stringify(reply.body), new RegExp(d().apiKey));
});

test("no such route under /api/v1/ is a JSON-RPC 404 that names the endpoint and hides the key", async () => {
  for (const [method, url, shown] of [
    ["GET", `/api/v1/31337/${d().apiKey}`, "GET /api/v1/31337/[redacted]"],
    ["PUT", `/api/v1/31337/${d().apiKey}`, "PUT /api/v1/31337/[redacted]"],
    ["POST", `/api/v1/${d().apiKey}`, "POST /api/v1/[redacted]"],
    ["POST", `/api/v1/31337/${d().apiKey}/extra`, "POST /api/v1/31337/[redacted]"],
  ] as const) {
    const reply = await post(url, method);
    assert.deepEqual(
      [reply.status, reply.body],
      [
        404,
        {
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, message: `Invalid request: no route ${shown}; use POST /api/v1/{chainId}/{apiKey}` },
        },
      ],
      url,
    );
    assert.equal(reply.headers["access-control-allow-origin"], "*");
  }
});

test("the management prefix keeps its own envelope for the same mistakes", async () => {
  const bad = await t().app.inject({ method: "GET", url: "/api/v2/public/sdk/funding-message/%FF" });
  assert.deepEqual(bad.json(), {
    statusCode: 400,
    message: "'/api/v2/public/sdk/funding-message/%FF' is not a valid url component",
  });
  const missing = await t().app.inject({ method: "GET", url: "/api/v1" });
  assert.deepEqual(missing.json(), { statusCode: 404, message: "Route not found: GET /api/v1" });
});

test("a path segment past the router's limit is a JSON-RPC invalid request that does not quote it", async () => {
  const long = "k".repeat(3000);
  const reply = await post(`/api/v1/31337/${long}`);
  assert.deepEqual(
    [reply.status, reply.body],
    [
      400,
      {
        jsonrpc: "2.0",
        id: null,
        error: {
          code: -32600,
          message: "Invalid request: '/api/v1/31337/[redacted]' has a path segment longer than 2048 characters",
        },
      },
    ],
  );
});
