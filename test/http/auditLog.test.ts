import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { auditedRoutesOf } from "../../src/http/auditedWrites";
import { hashToken } from "../../src/storage/accounts";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

/**
 * The audit log: every management write that succeeds leaves one entry (time, account, token, client address, method,
 * path, target, the rows it changed before → after, secrets masked), committed in the write's own transaction: a
 * refused write leaves none, and a write that fails after its change began leaves neither the change nor the entry.
 * Read back newest first, paged, filtered by paymaster, token and time. The service's clock is injected.
 */
let t: TestApp;
let clock = Date.parse("2026-06-01T00:00:00Z");
before(async () => {
  t = await startTestApp({ now: () => clock });
});
after(() => t.close());

interface Change {
  table: string;
  operation: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}
interface Entry {
  id: string;
  time: string;
  accountId: string;
  tokenId: string | null;
  tokenName: string | null;
  clientAddress: string;
  method: string;
  path: string;
  paymasterId: string | null;
  target: Record<string, unknown>;
  changes: Change[];
}

async function auditLog(token: string, query: Record<string, string> = {}) {
  const reply = await t.call("GET", "audit-log", { token, query });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return { entries: reply.body.data as Entry[], nextCursor: reply.body.nextCursor as string | null };
}

async function ok(method: string, path: string, dapp: Dapp, body?: unknown, apiKey = dapp.apiKey) {
  const reply = await t.call(method, path, { token: dapp.token, apiKey, body });
  assert.equal(reply.status, 200, `${method} ${path}: ${JSON.stringify(reply.body)}`);
  return reply.body.data as Record<string, unknown>;
}

const limit = {
  type: "PAYMASTER",
  cycleDuration: { value: 1, unit: "day" },
  threshold: 10,
  thresholdType: "COUNT",
};

test("each write leaves one entry with who, from where, what, and the change; no secret in any of it", async () => {
  const dapp = await t.dapp();
  const firstTokenId = (
    (await t.call("GET", "tokens", { token: dapp.token })).body.data as { tokenId: string; name: string }[]
  )[0]?.tokenId;
  clock += 1000;
  await ok("POST", "smart-contract", dapp, {
    name: "counter",
    address: "0x000000000000000000000000000000000000dEaD",
    abi: JSON.stringify([{ type: "function", name: "inc", inputs: [], outputs: [], stateMutability: "nonpayable" }]),
  });
  clock += 1000;
  const policy = await ok("POST", "paymaster-policy", dapp, {
    name: "daily",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: limit,
  });
  clock += 1000;
  await ok("PATCH", `paymaster-policy/limit/${policy._id}`, dapp, { threshold: 20 });
  clock += 1000;
  const webhook = await ok("POST", "webhook", dapp, {
    webhookUrl: "https://user:pass@hooks.example.com/verify?key=s3cret-in-url",
    requestType: "POST",
  });
  clock += 1000;
  const rotated = await ok("PATCH", "paymasterParameters", dapp, {
    paymasterId: dapp.paymasterId,
    type: "rotateApiKey",
    graceSeconds: 60,
  });
  clock += 1000;
  const made = await t.call("POST", "tokens", { token: dapp.token, body: { name: "ci", scope: "read" } });
  const newToken = made.body.data as { tokenId: string; authToken: string };

  const { entries } = await auditLog(dapp.token);
  // Newest first; the paymaster's creation (by the test helper) is the oldest.
  assert.deepEqual(
    entries.map((entry) => `${entry.method} ${entry.path.slice(MANAGEMENT_PREFIX.length)}`),
    [
      "POST /tokens",
      "PATCH /paymasterParameters",
      "POST /webhook",
      `PATCH /paymaster-policy/limit/${policy._id}`,
      "POST /paymaster-policy",
      "POST /smart-contract",
      "POST /paymasterParameters",
    ],
  );
  const [token, rotation, hook, limitUpdate, policyCreate, contract, created] = entries as [
    Entry,
    Entry,
    Entry,
    Entry,
    Entry,
    Entry,
    Entry,
  ];
  for (const entry of entries) {
    assert.equal(entry.accountId, dapp.accountId);
    assert.equal(entry.tokenId, firstTokenId);
    assert.equal(entry.tokenName, "first");
    assert.equal(entry.clientAddress, "127.0.0.1");
  }
  assert.equal(token.time, new Date(clock).toISOString());
  assert.equal(contract.time, new Date(clock - 5000).toISOString());
  // The created paymaster: the request named none, the database filled it in from the row.
  assert.equal(created.paymasterId, dapp.paymasterId);
  assert.deepEqual(
    created.changes.map((c) => [c.table, c.operation, c.before]),
    [["paymasters", "insert", null]],
  );
  assert.equal(created.changes[0]?.after?.api_key, "***", "the apiKey is masked");
  assert.equal(contract.paymasterId, dapp.paymasterId);
  assert.equal(contract.changes[0]?.after?.address, "0x000000000000000000000000000000000000dead");
  assert.equal(policyCreate.target.name, "daily");
  // An update shows the row's id and only what changed, before and after.
  assert.deepEqual(limitUpdate.target, { policyId: policy._id });
  const limitChange = limitUpdate.changes.find((c) => c.table === "policies");
  assert.equal(limitChange?.operation, "update");
  assert.equal(limitChange?.before?.id, policy._id);
  assert.equal((limitChange?.before?.policy_data as { threshold?: number } | undefined)?.threshold, 10);
  assert.equal((limitChange?.after?.policy_data as { threshold?: number } | undefined)?.threshold, 20);
  assert.equal(limitChange?.before?.name, undefined, "unchanged fields are left out");
  assert.equal(hook.changes[0]?.after?.url, "https://***@hooks.example.com/verify?***");
  assert.equal(hook.changes[0]?.after?.id, webhook.webhookId);
  assert.deepEqual(rotation.target, { paymasterId: dapp.paymasterId, type: "rotateApiKey" });
  const keyChange = rotation.changes[0];
  assert.deepEqual(
    [keyChange?.before?.api_key, keyChange?.after?.api_key, keyChange?.after?.previous_api_key],
    ["***", "***", "***"],
  );
  assert.equal(keyChange?.after?.previous_api_key_until_ms, clock - 1000 + 60_000);
  assert.equal(token.changes[0]?.after?.name, "ci");
  assert.equal(token.changes[0]?.after?.token_hash, "***");

  const everything = JSON.stringify(entries);
  for (const secret of [
    dapp.apiKey,
    String(rotated.apiKey),
    dapp.token,
    hashToken(dapp.token),
    newToken.authToken,
    hashToken(newToken.authToken),
    "s3cret-in-url",
    "user:pass",
  ]) {
    assert.ok(!everything.includes(secret), `the log shows ${secret.slice(0, 6)}…`);
  }
  // The token made last is named by the entries it makes.
  const byNew = await t.call("POST", "tokens", { token: newToken.authToken, body: { name: "x", scope: "read" } });
  assert.equal(byNew.status, 403, "a read token writes nothing");
  const readable = await auditLog(newToken.authToken, { limit: "1" });
  assert.equal(readable.entries[0]?.id, token.id, "a read token reads the log");
});

test("refused writes leave no entry: bad input, unknown ids, wrong credentials", async () => {
  const dapp = await t.dapp();
  const before = (await auditLog(dapp.token)).entries.length;
  const refusals: [string, string, unknown][] = [
    ["POST", "smart-contract", { name: "x" }],
    ["PATCH", "smart-contract", { address: "0x000000000000000000000000000000000000dEaD", whitelistedMethods: [] }],
    ["POST", "paymaster-policy", { name: "x", policyType: "NOPE", policyData: {} }],
    ["PATCH", "paymaster-policy/deactivate/00000000-0000-4000-8000-000000000000", undefined],
    ["PATCH", "webhook", { webhookId: "00000000-0000-4000-8000-000000000000", active: true }],
    ["PATCH", "paymasterParameters", { paymasterId: dapp.paymasterId, type: "rotateApiKey", graceSeconds: -1 }],
    ["DELETE", "tokens/00000000-0000-4000-8000-000000000000", undefined],
    ["POST", "tokens", { name: "first", scope: "read" }],
  ];
  for (const [method, path, body] of refusals) {
    const reply = await t.call(method, path, { token: dapp.token, apiKey: dapp.apiKey, body });
    assert.ok(reply.status >= 400 && reply.status < 500, `${method} ${path}: ${reply.status}`);
  }
  const wrongKey = await t.call("POST", "webhook", {
    token: dapp.token,
    apiKey: "nope",
    body: { webhookUrl: "https://hooks.example.com/a", requestType: "POST" },
  });
  assert.equal(wrongKey.status, 401);
  assert.equal((await auditLog(dapp.token)).entries.length, before);
});

test("a write that fails after its change began leaves neither the change nor its entry", async () => {
  const dapp = await t.dapp();
  const before = (await auditLog(dapp.token)).entries.length;
  /** The write each fault is put in: a spending limit, answered 500 without the fault's text. */
  const refusedWith500 = async () => {
    const reply = await t.call("POST", "paymaster-policy", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { name: "never", policyType: "PAYMASTER_SA_LIMIT", policyData: limit },
    });
    assert.equal(reply.status, 500);
    assert.doesNotMatch(JSON.stringify(reply.body), /injected/, "internals stay hidden");
  };
  // A real failure inside the database, after the policy row was written and added to the audit entry: the statement
  // that appends the next change to the entry raises. (The entry was opened and holds the first change by then.)
  await t.db.exec(`
    CREATE FUNCTION test_fail_after_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF jsonb_array_length(NEW.changes) > 0 THEN RAISE EXCEPTION 'injected failure after the change'; END IF;
      RETURN NEW;
    END;
    $fn$;
    CREATE TRIGGER test_fail_after_change BEFORE UPDATE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION test_fail_after_change();
  `);
  try {
    await refusedWith500();
  } finally {
    await t.db.exec("DROP TRIGGER test_fail_after_change ON audit_log; DROP FUNCTION test_fail_after_change();");
  }
  const policies = await t.db.query("SELECT id FROM policies WHERE paymaster_id = $1", [dapp.paymasterId]);
  assert.deepEqual(policies, [], "the policy was rolled back");
  assert.equal((await auditLog(dapp.token)).entries.length, before, "and so was its entry");

  // The other way round: the change itself fails part-way (the second of its statements), after the entry opened.
  await t.db.exec(`
    CREATE FUNCTION test_fail_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN RAISE EXCEPTION 'injected failure in the change'; END;
    $fn$;
    CREATE TRIGGER test_fail_change AFTER INSERT ON policies FOR EACH ROW EXECUTE FUNCTION test_fail_change();
  `);
  try {
    await refusedWith500();
  } finally {
    await t.db.exec("DROP TRIGGER test_fail_change ON policies; DROP FUNCTION test_fail_change();");
  }
  assert.equal((await auditLog(dapp.token)).entries.length, before);
  // And with the faults gone the same write succeeds and is logged once.
  await ok("POST", "paymaster-policy", dapp, { name: "now", policyType: "PAYMASTER_SA_LIMIT", policyData: limit });
  assert.equal((await auditLog(dapp.token)).entries.length, before + 1);
});

test("pages newest first, filters by paymaster, token and time; another account sees none of it", async () => {
  const dapp = await t.dapp();
  const second = await t.dapp({ token: dapp.token });
  const start = clock;
  for (const [i, target] of [dapp, second, dapp, second, dapp].entries()) {
    clock += 1000;
    await ok("POST", "webhook", target, { webhookUrl: `https://hooks.example.com/${i}`, requestType: "POST" });
  }
  const all = (await auditLog(dapp.token, { from: new Date(start + 1).toISOString() })).entries;
  assert.equal(all.length, 5);
  const pages: Entry[] = [];
  let cursor: string | null = null;
  do {
    const page: { entries: Entry[]; nextCursor: string | null } = await auditLog(dapp.token, {
      from: new Date(start + 1).toISOString(),
      limit: "2",
      ...(cursor ? { cursor } : {}),
    });
    pages.push(...page.entries);
    cursor = page.nextCursor;
  } while (cursor);
  assert.deepEqual(
    pages.map((entry) => entry.id),
    all.map((entry) => entry.id),
    "the pages, in order, are the whole list",
  );
  assert.ok(
    all.every((entry, i) => i === 0 || BigInt(entry.id) < BigInt(all[i - 1]?.id ?? "0")),
    "newest first",
  );
  const ofSecond = (await auditLog(dapp.token, { paymasterId: second.paymasterId })).entries;
  assert.equal(ofSecond.filter((entry) => entry.method === "POST" && entry.path.endsWith("/webhook")).length, 2);
  assert.ok(ofSecond.every((entry) => entry.paymasterId === second.paymasterId));
  const window = (
    await auditLog(dapp.token, { from: new Date(start + 2000).toISOString(), to: new Date(start + 4000).toISOString() })
  ).entries;
  assert.deepEqual(
    window.map((entry) => entry.time),
    [new Date(start + 3000).toISOString(), new Date(start + 2000).toISOString()],
  );
  const byToken = await t.call("GET", "tokens", { token: dapp.token });
  const firstId = (byToken.body.data as { tokenId: string }[])[0]?.tokenId as string;
  assert.ok((await auditLog(dapp.token, { tokenId: firstId })).entries.length >= 5);
  assert.deepEqual((await auditLog(dapp.token, { tokenId: "00000000-0000-4000-8000-000000000000" })).entries, []);
  const stranger = await t.account();
  assert.deepEqual((await auditLog(stranger.token)).entries, [], "another account's log is its own");
  for (const [query, message] of [
    [{ from: "yesterday" }, "from must be an ISO 8601 time"],
    [{ paymasterId: "x" }, "paymasterId must be a UUID"],
    [{ limit: "0" }, "limit must be a whole number from 1 to 500"],
    [{ cursor: "bm9wZQ" }, "cursor must be the nextCursor of a previous page of this list"],
  ] as const) {
    const reply = await t.call("GET", "audit-log", { token: dapp.token, query });
    assert.equal(reply.status, 400, JSON.stringify(query));
    assert.ok(reply.body.message.includes(message), reply.body.message);
  }
});

test("every write route of the OpenAPI document is an audited write", async () => {
  const document = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json() as {
    paths: Record<string, Record<string, unknown>>;
  };
  const writes = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations)
      .filter((method) => method !== "get")
      .map((method) => `${method.toUpperCase()} ${path.replace(/\{([A-Za-z]+)\}/g, ":$1")}`),
  );
  assert.ok(writes.length >= 15, `only ${writes.length} write routes`);
  assert.deepEqual([...auditedRoutesOf(t.app)].sort(), writes.sort());
});
