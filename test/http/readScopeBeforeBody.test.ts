// A read token on a write route gets its 403 before the body is read (docs/management-api.md, Tokens): whatever the
// body, malformed JSON, another content type or one over the limit, the answer is the scope's 403, not the body's
// 400, and nothing is written. Other callers keep the body's 400 (the credentials of an admin token or none at all
// are checked after the body, as before).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

const LIMIT = 64 * 1024;
const READ_SCOPE = "This authToken has the read scope: it may read (GET) but not change anything";

let t: TestApp;
let dapp: Dapp;
let reader: string;
before(async () => {
  t = await startTestApp({ bodyLimitBytes: LIMIT });
  dapp = await t.dapp();
  const created = await t.call("POST", "tokens", { token: dapp.token, body: { name: "reader", scope: "read" } });
  reader = (created.body.data as { authToken: string }).authToken;
});
after(() => t.close());

/** Bodies a write refuses with a 400 of their own, each with its content type. */
const BODIES: Record<string, { payload: string; contentType: string; refusal: string }> = {
  "malformed JSON": {
    payload: '{"name": "x",',
    contentType: "application/json",
    refusal: "Request body is not valid JSON",
  },
  "a text/plain body": {
    payload: "name=x",
    contentType: "text/plain",
    refusal: "Content-Type must be application/json",
  },
  "a body over the limit": {
    payload: JSON.stringify({ name: "x".repeat(2 * LIMIT) }),
    contentType: "application/json",
    refusal: `Request body is larger than the limit of ${LIMIT} bytes`,
  },
};

/** Write routes of each guard: the token alone, and token and apiKey. */
const WRITES = () => [
  { method: "POST", path: "paymasterParameters", apiKey: undefined },
  { method: "POST", path: "tokens", apiKey: undefined },
  { method: "PATCH", path: "paymasterParameters", apiKey: dapp.apiKey },
  { method: "POST", path: "webhook", apiKey: dapp.apiKey },
  { method: "DELETE", path: "webhook", apiKey: dapp.apiKey },
];

const send = (method: string, path: string, token: string, apiKey: string | undefined, body: (typeof BODIES)[string]) =>
  t.app.inject({
    method: method as "POST",
    url: `${MANAGEMENT_PREFIX}/${path}`,
    headers: { authToken: token, "content-type": body.contentType, ...(apiKey ? { apiKey } : {}) },
    payload: body.payload,
  });

test("a read token: 403 with the scope's message whatever the body, and no audit entry", async () => {
  const auditBefore = await t.db.query("SELECT id FROM audit_log");
  for (const [name, body] of Object.entries(BODIES)) {
    for (const { method, path, apiKey } of WRITES()) {
      const reply = await send(method, path, reader, apiKey, body);
      assert.deepEqual(
        [reply.statusCode, reply.json()],
        [403, { statusCode: 403, message: READ_SCOPE }],
        `${name}, ${method} ${path}`,
      );
    }
  }
  assert.deepEqual(await t.db.query("SELECT id FROM audit_log"), auditBefore);
});

test("an admin token with the same bodies still gets each body's 400", async () => {
  for (const [name, body] of Object.entries(BODIES)) {
    for (const { method, path, apiKey } of WRITES()) {
      const reply = await send(method, path, dapp.token, apiKey, body);
      assert.deepEqual([reply.statusCode, reply.json().message], [400, body.refusal], `${name}, ${method} ${path}`);
    }
  }
});
