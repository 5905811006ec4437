import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { isStorableText } from "../../src/storage/storableText";
import { appWithDapp } from "../helpers/appWithDapp";

/**
 * Bytes PostgreSQL text cannot hold (U+0000) or that have no UTF-8 form (a lone surrogate), sent where the service
 * looks a key up: every credential header, every id in a path or query, the RPC path. Each must get exactly the answer
 * an ordinary unknown key gets (the documented 401/404), never a database error: on PGlite and on PostgreSQL alike.
 */
const { t, dapp: d } = appWithDapp();

/** Header values: as app.inject sends them (a real HTTP parser refuses NUL in a header before the service sees it). */
const HOSTILE_TEXT = ["a\u0000b", "\u0000", "\ud800", "x\udfffy", `${"\u0000".repeat(200)}`];
/** The same bytes in a URL: percent-encoded NUL, alone and inside a key-shaped value. */
const HOSTILE_URL = ["%00", "a%00b", `${"A".repeat(31)}%00`, "%00%00%00"];
const ORDINARY = "no-such-key";

interface Answer {
  status: number;
  body: unknown;
}

async function inject(method: string, url: string, headers: Record<string, string>, payload?: unknown) {
  const response = await t().app.inject({
    method: method as "GET",
    url,
    headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" },
    payload: payload === undefined ? undefined : JSON.stringify(payload),
  });
  return { status: response.statusCode, body: response.json() } as Answer;
}

/** Every management endpoint, with a body that reaches past the credentials (the credentials decide the answer). */
const MANAGEMENT: { method: string; path: string; body?: unknown }[] = [
  { method: "GET", path: "paymasterParameters" },
  { method: "GET", path: "paymaster" },
  // No version: with an accepted token the answer is the same 400 every time, instead of one create and then "exists".
  { method: "POST", path: "paymasterParameters", body: { name: "x", type: "HYBRID", chainId: 31337 } },
  {
    method: "PATCH",
    path: "paymasterParameters",
    body: {
      paymasterId: "00000000-0000-4000-8000-000000000000",
      type: "paymasterFundingId",
      signature: "0x",
      address: "0x0000000000000000000000000000000000000001",
    },
  },
  { method: "GET", path: "funding-message/PAYMASTER" },
  { method: "GET", path: "smart-contract" },
  {
    method: "POST",
    path: "smart-contract",
    body: { name: "c", address: "0x00000000000000000000000000000000000000aa", abi: "[]" },
  },
  {
    method: "PATCH",
    path: "smart-contract",
    body: { address: "0x00000000000000000000000000000000000000aa", whitelistedMethods: [] },
  },
  { method: "DELETE", path: "smart-contract", body: { address: "0x00000000000000000000000000000000000000aa" } },
  { method: "GET", path: "paymaster-policy" },
  { method: "GET", path: "paymaster-policy/usage" },
  { method: "POST", path: "paymaster-policy", body: { name: "p", policyType: "WALLET_DEPLOYMENT", policyData: {} } },
  { method: "PATCH", path: "paymaster-policy/limit/00000000-0000-4000-8000-000000000000" },
  { method: "PATCH", path: "paymaster-policy/activate/00000000-0000-4000-8000-000000000000" },
  { method: "PATCH", path: "paymaster-policy/deactivate/00000000-0000-4000-8000-000000000000" },
  { method: "GET", path: "webhook" },
  { method: "POST", path: "webhook", body: { webhookUrl: "https://hooks.example.com/", requestType: "POST" } },
  { method: "PATCH", path: "webhook", body: { webhookId: "00000000-0000-4000-8000-000000000000", active: true } },
  { method: "DELETE", path: "webhook", body: { webhookId: "00000000-0000-4000-8000-000000000000" } },
  { method: "GET", path: "webhook-secret" },
];

const urlOf = (path: string) => `${MANAGEMENT_PREFIX}/${path.replace("PAYMASTER", d().paymasterId)}`;

/** The hostile value gets what an ordinary unknown value gets (a token-only endpoint ignores the apiKey: 200). */
function assertSameAnswer(hostile: Answer, ordinary: Answer, what: string) {
  assert.ok(hostile.status < 500, `${what}: ${hostile.status} ${JSON.stringify(hostile.body)}`);
  assert.deepEqual(hostile, ordinary, what);
}

test("the check itself: NUL and lone surrogates are unstorable, paired surrogates and U+FFFD are fine", () => {
  for (const text of HOSTILE_TEXT) assert.equal(isStorableText(text), false, JSON.stringify(text));
  for (const text of ["", "pm_abc-_", "\ud83d\ude00", "\ufffd", "ÿ", "\u0001"]) {
    assert.equal(isStorableText(text), true, JSON.stringify(text));
  }
});

describe("credential headers", () => {
  for (const endpoint of MANAGEMENT) {
    test(`${endpoint.method} ${endpoint.path}: a hostile authToken or apiKey is an unknown one`, async () => {
      const url = urlOf(endpoint.path);
      const send = (token: string, apiKey: string) =>
        inject(endpoint.method, url, { authToken: token, apiKey }, endpoint.body);
      const unknownToken = await send(ORDINARY, d().apiKey);
      const unknownApiKey = await send(d().token, ORDINARY);
      assert.equal(
        unknownToken.status,
        endpoint.method === "PATCH" && endpoint.path === "paymasterParameters" ? 404 : 401,
      );
      for (const value of HOSTILE_TEXT) {
        assertSameAnswer(await send(value, d().apiKey), unknownToken, `authToken ${JSON.stringify(value)}`);
        assertSameAnswer(await send(d().token, value), unknownApiKey, `apiKey ${JSON.stringify(value)}`);
      }
    });
  }
});

describe("ids in paths and queries", () => {
  const auth = () => ({ authToken: d().token, apiKey: d().apiKey });
  const idPaths = [
    { method: "GET", path: (id: string) => `funding-message/${id}` },
    { method: "PATCH", path: (id: string) => `paymaster-policy/limit/${id}` },
    { method: "PATCH", path: (id: string) => `paymaster-policy/activate/${id}` },
    { method: "PATCH", path: (id: string) => `paymaster-policy/deactivate/${id}` },
    { method: "GET", path: (id: string) => `webhook?webhookId=${id}` },
  ];
  for (const { method, path } of idPaths) {
    test(`${method} ${path(":id")}: a hostile id is an unknown id`, async () => {
      const unknown = await inject(method, urlOf(path(ORDINARY)), auth());
      assert.equal(unknown.status, 404);
      for (const id of HOSTILE_URL) assertSameAnswer(await inject(method, urlOf(path(id)), auth()), unknown, id);
    });
  }

  test("a hostile webhookId in a body is an unknown webhook", async () => {
    for (const method of ["PATCH", "DELETE"]) {
      const send = (webhookId: string) => inject(method, urlOf("webhook"), auth(), { webhookId, active: true });
      const unknown = await send(ORDINARY);
      for (const id of HOSTILE_TEXT) assertSameAnswer(await send(id), unknown, `${method} ${JSON.stringify(id)}`);
    }
  });
});

describe("the RPC path", () => {
  const call = { jsonrpc: "2.0", id: 7, method: "pm_sponsorUserOperation", params: [] };
  test("a hostile apiKey is an unknown apiKey (401 with a JSON-RPC error)", async () => {
    const unknown = await inject("POST", `/api/v1/31337/${ORDINARY}`, {}, call);
    assert.deepEqual(unknown, {
      status: 401,
      body: { jsonrpc: "2.0", id: 7, error: { code: -32001, message: "Unknown apiKey: no paymaster has this key" } },
    });
    for (const key of HOSTILE_URL) {
      assertSameAnswer(await inject("POST", `/api/v1/31337/${key}`, {}, call), unknown, key);
    }
  });

  test("a hostile chainId is an unsupported chain", async () => {
    for (const chain of HOSTILE_URL) {
      const reply = await inject("POST", `/api/v1/${chain}/${d().apiKey}`, {}, call);
      assert.equal(reply.status, 404, chain);
      assert.equal((reply.body as { error: { code: number } }).error.code, -32001, chain);
    }
  });

  test("the valid apiKey still sponsors after all of that (nothing was cached or broken)", async () => {
    const reply = await inject("POST", `/api/v1/31337/${d().apiKey}`, {}, call);
    // No params: the method's own validation answers, which it only reaches with a known apiKey.
    assert.deepEqual(reply.status, 400);
    assert.equal((reply.body as { error: { code: number } }).error.code, -32602);
  });
});
