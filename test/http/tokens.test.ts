import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { hashToken } from "../../src/storage/accounts";
import type { Database } from "../../src/storage/database";
import { type Dapp, startTwoInstances, type TestApp, type TwoInstances } from "../helpers/app";
import { eventually } from "../helpers/eventually";

/**
 * Tokens with scopes: an account creates named admin or read tokens (the secret shown once, stored hashed), lists them
 * without secrets, and revokes them at once on every instance. A read token may call every GET of the OpenAPI document
 * and gets 403 on every write route of it. The service's clock is injected for expiry and last use.
 */
let clock = Date.parse("2026-06-01T00:00:00Z");
const now = () => clock;

let instances: TwoInstances | undefined;
let a: TestApp;
let b: TestApp;
let first: Database;

before(async () => {
  instances = await startTwoInstances({ now });
  ({ a, b, first } = instances);
});
after(() => instances?.close());

interface Created {
  tokenId: string;
  name: string;
  scope: string;
  expiresAt: string | null;
  authToken: string;
}

async function createToken(t: TestApp, token: string, body: Record<string, unknown>): Promise<Created> {
  const reply = await t.call("POST", "tokens", { token, body });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Token created");
  return reply.body.data as Created;
}

const listDapps = (t: TestApp, token: string) => t.call("GET", "paymasterParameters", { token });

test("a token is shown once, listed without its secret, and stored only as its hash", async () => {
  const dapp = await a.dapp();
  const created = await createToken(a, dapp.token, { name: "monitoring", scope: "read" });
  assert.equal(created.scope, "read");
  assert.equal(created.expiresAt, null);
  assert.match(created.authToken, /^pm_[A-Za-z0-9_-]{43}$/);
  const list = await a.call("GET", "tokens", { token: dapp.token });
  assert.equal(list.status, 200);
  const tokens = list.body.data as Record<string, unknown>[];
  assert.deepEqual(
    tokens.map((token) => [token.name, token.scope, token.first]),
    [
      ["first", "admin", true],
      ["monitoring", "read", false],
    ],
    "the account's first token is admin and listed first",
  );
  assert.equal(tokens[1]?.createdAt, new Date(clock).toISOString());
  assert.doesNotMatch(JSON.stringify(list.body), /authToken|pm_/, "no secret in the list");
  const rows = await first.query<{ token_hash: string }>("SELECT token_hash FROM account_tokens WHERE id = $1", [
    created.tokenId,
  ]);
  assert.deepEqual(rows, [{ token_hash: hashToken(created.authToken) }]);
});

test("bad input names the field; names are unique per account", async () => {
  const dapp = await a.dapp();
  const cases: [Record<string, unknown>, string][] = [
    [{ scope: "read" }, "name is required"],
    [{ name: "", scope: "read" }, "name must not be empty"],
    [{ name: "x", scope: "owner" }, "scope must be one of admin, read"],
    [{ name: "x", scope: "read", expiresAt: "tomorrow" }, "expiresAt must be an ISO 8601 time with its offset"],
    [{ name: "x", scope: "read", expiresAt: new Date(clock - 1000).toISOString() }, "expiresAt must be in the future"],
    [{ name: "first", scope: "read" }, "A token with this name already exists"],
  ];
  for (const [body, message] of cases) {
    const reply = await a.call("POST", "tokens", { token: dapp.token, body });
    assert.equal(reply.status, 400, JSON.stringify(body));
    assert.ok(reply.body.message.startsWith(message), `${JSON.stringify(body)}: ${reply.body.message}`);
  }
  const list = await a.call("GET", "tokens", { token: dapp.token });
  assert.equal((list.body.data as unknown[]).length, 1, "nothing was created by the refusals");
});

test("an expiring token is accepted until its time on the service's clock, then refused", async () => {
  const dapp = await a.dapp();
  const created = await createToken(a, dapp.token, {
    name: "short",
    scope: "admin",
    expiresAt: new Date(clock + 60_000).toISOString(),
  });
  assert.equal(created.expiresAt, new Date(clock + 60_000).toISOString());
  assert.equal((await listDapps(a, created.authToken)).status, 200);
  clock += 59_999;
  assert.equal((await listDapps(a, created.authToken)).status, 200);
  clock += 1;
  assert.equal((await listDapps(a, created.authToken)).status, 401, "expired, though its account is cached");
  assert.equal((await listDapps(b, created.authToken)).status, 401);
});

test("last use is noted, at most once a minute", async () => {
  const dapp = await a.dapp();
  const created = await createToken(a, dapp.token, { name: "used", scope: "read" });
  const lastUsed = async () =>
    (
      (await a.call("GET", "tokens", { token: dapp.token })).body.data as { name: string; lastUsedAt: string | null }[]
    ).find((token) => token.name === "used")?.lastUsedAt;
  assert.equal(await lastUsed(), null);
  const firstUse = clock;
  await listDapps(a, created.authToken);
  assert.equal(await lastUsed(), new Date(firstUse).toISOString());
  clock += 30_000;
  await listDapps(a, created.authToken);
  assert.equal(await lastUsed(), new Date(firstUse).toISOString(), "within the minute: not written again");
  clock += 30_000;
  await listDapps(a, created.authToken);
  assert.equal(await lastUsed(), new Date(clock).toISOString());
});

test("a revoked token is refused at once on this instance and on the other", async () => {
  const dapp = await a.dapp();
  const created = await createToken(a, dapp.token, { name: "leaked", scope: "admin" });
  for (const t of [a, b]) assert.equal((await listDapps(t, created.authToken)).status, 200, "known to both");
  const revoked = await a.call("DELETE", `tokens/${created.tokenId}`, { token: dapp.token });
  assert.deepEqual([revoked.status, revoked.body.data], [200, { tokenId: created.tokenId }]);
  assert.equal((await listDapps(a, created.authToken)).status, 401, "this instance refuses it before it answered");
  await eventually(
    "the other instance refuses it",
    async () => (await listDapps(b, created.authToken)).status,
    (status) => status === 401,
  );
  assert.equal((await listDapps(b, dapp.token)).status, 200, "the account's other tokens still work");
  const again = await a.call("DELETE", `tokens/${created.tokenId}`, { token: dapp.token });
  assert.deepEqual([again.status, again.body.message], [404, "Token not found"]);
  const other = await a.dapp();
  const othersToken = await createToken(a, other.token, { name: "theirs", scope: "read" });
  const foreign = await a.call("DELETE", `tokens/${othersToken.tokenId}`, { token: dapp.token });
  assert.deepEqual([foreign.status, foreign.body.message], [404, "Token not found"], "another account's token");
  for (const id of ["not-a-uuid", randomUUID()]) {
    assert.equal((await a.call("DELETE", `tokens/${id}`, { token: dapp.token })).status, 404);
  }
  assert.equal((await listDapps(a, othersToken.authToken)).status, 200);
});

type Operation = { parameters?: { in: string; name: string }[] };
type Document = { paths: Record<string, Record<string, Operation>> };

/** A request for a documented route: its path parameters filled with the dApp's ids. */
function concrete(path: string, dapp: Dapp): string {
  return path
    .slice(MANAGEMENT_PREFIX.length + 1)
    .replace("{paymasterId}", dapp.paymasterId)
    .replace(/\{[A-Za-z]+\}/g, randomUUID());
}

test("a read token: every GET of the OpenAPI document answers, every write route is 403 and changes nothing", async () => {
  const dapp = await a.dapp();
  const reader = await createToken(a, dapp.token, { name: "reader", scope: "read" });
  const document = (await a.app.inject({ method: "GET", url: "/openapi.json" })).json() as Document;
  const routes = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => ({ method: method.toUpperCase(), path })),
  );
  const writes = routes.filter((route) => route.method !== "GET");
  const reads = routes.filter((route) => route.method === "GET");
  assert.ok(writes.length >= 15, `only ${writes.length} write routes in the document`);
  const auditBefore = await first.query("SELECT id FROM audit_log");
  for (const route of writes) {
    const reply = await a.call(route.method, concrete(route.path, dapp), {
      token: reader.authToken,
      apiKey: dapp.apiKey,
      body: { paymasterId: dapp.paymasterId, name: "x", type: "active", active: false },
    });
    assert.deepEqual(
      [reply.status, reply.body],
      [
        403,
        { statusCode: 403, message: "This authToken has the read scope: it may read (GET) but not change anything" },
      ],
      `${route.method} ${route.path}`,
    );
  }
  assert.deepEqual(await first.query("SELECT id FROM audit_log"), auditBefore, "no write happened");
  for (const route of reads) {
    const reply = await a.call("GET", concrete(route.path, dapp), { token: reader.authToken, apiKey: dapp.apiKey });
    assert.ok(![401, 403].includes(reply.status), `${route.path}: ${reply.status} ${reply.body.message}`);
  }
  // The same writes with an admin token are not refused for their scope.
  const admin = await a.call("POST", "tokens", { token: dapp.token, body: { name: "made-by-admin", scope: "read" } });
  assert.equal(admin.status, 200);
});
