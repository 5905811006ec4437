import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Dapp, startTwoInstances, type TestApp, type TwoInstances } from "../helpers/app";
import { eventually } from "../helpers/eventually";

/**
 * apiKey rotation: the new key answers at once; the replaced one keeps working on the management API and the RPC URL
 * until its grace period ends on the service's clock (injected here), then it is an unknown apiKey. With a grace of 0
 * it stops at once, on a second instance too (on PostgreSQL: another connection pool, told by the database).
 */
let clock = Date.parse("2026-06-01T00:00:00Z");
const now = () => clock;

let instances: TwoInstances | undefined;
let a: TestApp;
let b: TestApp;

before(async () => {
  // A setup cache TTL far beyond the test: what the second instance refuses, it refuses because it was told.
  instances = await startTwoInstances({ now, setupCacheTtlMs: 600_000 });
  ({ a, b } = instances);
});
after(() => instances?.close());

const management = (t: TestApp, dapp: Dapp, apiKey: string) =>
  t.call("GET", "smart-contract", { token: dapp.token, apiKey });

/** The RPC URL with this key: 401 "Unknown apiKey" when the key names nothing, else the params' 400. */
async function rpc(t: TestApp, apiKey: string): Promise<number> {
  const response = await t.app.inject({
    method: "POST",
    url: `/api/v1/31337/${apiKey}`,
    headers: { "content-type": "application/json" },
    payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_sponsorUserOperation", params: [] }),
  });
  if (response.statusCode === 401) assert.match(response.json().error.message, /Unknown apiKey/);
  return response.statusCode;
}

const rotate = (t: TestApp, dapp: Dapp, apiKey: string, graceSeconds: unknown) =>
  t.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey,
    body: { paymasterId: dapp.paymasterId, type: "rotateApiKey", graceSeconds },
  });

test("with a grace period the old key works until it ends, on the management API and the RPC URL", async () => {
  const dapp = await a.dapp();
  // Both instances know the old key before the rotation (their caches hold it).
  for (const t of [a, b]) {
    assert.equal((await management(t, dapp, dapp.apiKey)).status, 200);
    assert.notEqual(await rpc(t, dapp.apiKey), 401);
  }
  const reply = await rotate(a, dapp, dapp.apiKey, 3600);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const data = reply.body.data as { apiKey: string; paymasterId: string; previousApiKeyValidUntil: string };
  assert.notEqual(data.apiKey, dapp.apiKey);
  assert.equal(data.paymasterId, dapp.paymasterId);
  assert.equal(data.previousApiKeyValidUntil, new Date(clock + 3600_000).toISOString());
  for (const t of [a, b]) {
    await eventually(
      "the new key works",
      async () => (await management(t, dapp, data.apiKey)).status,
      (status) => status === 200,
    );
    assert.notEqual(await rpc(t, data.apiKey), 401);
    assert.equal((await management(t, dapp, dapp.apiKey)).status, 200, "the old key still works in its grace");
    assert.notEqual(await rpc(t, dapp.apiKey), 401);
  }
  // The list shows the new key only.
  const list = await a.call("GET", "paymasterParameters", { token: dapp.token });
  const listed = (list.body.data as { paymasterId: string; apiKey: string }[]).find(
    (p) => p.paymasterId === dapp.paymasterId,
  );
  assert.equal(listed?.apiKey, data.apiKey);

  clock += 3600_000 - 1;
  assert.equal((await management(a, dapp, dapp.apiKey)).status, 200, "one millisecond before the end");
  clock += 1;
  for (const t of [a, b]) {
    assert.equal((await management(t, dapp, dapp.apiKey)).status, 401, "the grace ended: unknown apiKey");
    assert.equal(await rpc(t, dapp.apiKey), 401);
    assert.equal((await management(t, dapp, data.apiKey)).status, 200);
    assert.notEqual(await rpc(t, data.apiKey), 401);
  }
});

test("a grace of 0 replaces the key at once, on this instance and on the other", async () => {
  const dapp = await a.dapp();
  for (const t of [a, b]) {
    assert.equal((await management(t, dapp, dapp.apiKey)).status, 200);
    assert.notEqual(await rpc(t, dapp.apiKey), 401);
  }
  const reply = await rotate(a, dapp, dapp.apiKey, 0);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const data = reply.body.data as { apiKey: string; previousApiKeyValidUntil: string | null };
  assert.equal(data.previousApiKeyValidUntil, null);
  assert.equal((await management(a, dapp, dapp.apiKey)).status, 401);
  assert.equal(await rpc(a, dapp.apiKey), 401);
  // The other instance hears of it from the database (at once on PGlite, after the commit's notification on
  // PostgreSQL), not from its setup cache's TTL, which outlasts the test.
  await eventually(
    "B refuses the old key",
    async () => (await management(b, dapp, dapp.apiKey)).status,
    (status) => status === 401,
  );
  await eventually(
    "B's RPC URL refuses the old key",
    () => rpc(b, dapp.apiKey),
    (status) => status === 401,
  );
  assert.equal((await management(b, dapp, data.apiKey)).status, 200);
});

test("a second rotation ends the first one's grace: only the key just replaced keeps working", async () => {
  const dapp = await a.dapp();
  const one = (await rotate(a, dapp, dapp.apiKey, 600)).body.data as { apiKey: string };
  const two = await rotate(a, dapp, one.apiKey, 600);
  assert.equal(two.status, 200);
  const twoKey = (two.body.data as { apiKey: string }).apiKey;
  assert.equal((await management(a, dapp, dapp.apiKey)).status, 401, "the first key is gone");
  assert.equal(await rpc(a, dapp.apiKey), 401);
  assert.equal((await management(a, dapp, one.apiKey)).status, 200, "the key just replaced is in its grace");
  assert.equal((await management(a, dapp, twoKey)).status, 200);
});

test("the old key in its grace may rotate too, and answers name the new key", async () => {
  const dapp = await a.dapp();
  const one = (await rotate(a, dapp, dapp.apiKey, 600)).body.data as { apiKey: string };
  const viaOld = await a.call("GET", "paymasterParameters", { token: dapp.token });
  assert.ok((viaOld.body.data as { apiKey: string }[]).some((p) => p.apiKey === one.apiKey));
  const again = await rotate(a, dapp, dapp.apiKey, 0);
  assert.equal(again.status, 200, "the replaced key still names the paymaster during its grace");
});

test("bad input names the field; another account's paymaster is not found", async () => {
  const dapp = await a.dapp();
  const problem = "graceSeconds must be a whole number of seconds from 0 to 2592000";
  for (const graceSeconds of [-1, 1.5, "60", 2592001]) {
    const reply = await rotate(a, dapp, dapp.apiKey, graceSeconds);
    assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message: problem }], String(graceSeconds));
  }
  const missing = await a.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: dapp.paymasterId, type: "rotateApiKey" },
  });
  assert.equal(missing.status, 400);
  assert.match(missing.body.message, /graceSeconds/);
  const other = await a.dapp();
  const foreign = await a.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: other.paymasterId, type: "rotateApiKey", graceSeconds: 0 },
  });
  assert.deepEqual([foreign.status, foreign.body.message], [404, "Paymaster not found"]);
  assert.equal((await management(a, other, other.apiKey)).status, 200, "the other paymaster keeps its key");
  assert.equal((await management(a, dapp, dapp.apiKey)).status, 200, "nothing was rotated by the refusals");
});
