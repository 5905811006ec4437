import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, test } from "node:test";
import { ADMIN_SECRET_HEADER } from "../../src/http/admin";
import { CredentialCache } from "../../src/http/credentialCache";
import { type Database, openDatabase, type Queryable } from "../../src/storage/database";
import { CREDENTIALS_CHANNEL, migrate } from "../../src/storage/migrations";
import { type Dapp, startTwoInstances, type TestApp, type TwoInstances } from "../helpers/app";
import { testDatabaseUrl } from "../helpers/database";
import { eventually } from "../helpers/eventually";

/**
 * The management API's credential cache: a known token and apiKey are checked without a query, and every change of a
 * credential (rotation, revocation, a write straight in the database) applies at once on this instance and on a second
 * one sharing the database. The queries are counted by a wrapper of the cache's Queryable, never by timing.
 */
const SECRET = "admin-secret-for-tests";
const url = testDatabaseUrl();

/** Two instances' databases: one PGlite shared in this process, or two connection pools on one PostgreSQL schema. */
let first: Database;
let instances: TwoInstances | undefined;
/** The SQL each instance's cache ran, in order. */
const lookups: [string[], string[]] = [[], []];
const caches: CredentialCache[] = [];
let a: TestApp;
let b: TestApp;

/**
 * Instance A's cache hears "listening again" only when the test lets it: the listener reconnects within 0.1 s, and on a
 * loaded machine that could fall inside the steps that need it down.
 */
const reconnectGate: { held: boolean; pendingUp?: () => void } = { held: false };

class GatedCredentialCache extends CredentialCache {
  override follow(db: Pick<Database, "listen">, channel: string): Promise<void> {
    return super.follow(
      {
        listen: (name, handlers) =>
          db.listen(name, {
            ...handlers,
            up: () => {
              if (reconnectGate.held) reconnectGate.pendingUp = handlers.up;
              else handlers.up();
            },
          }),
      },
      channel,
    );
  }
}

const counted = (db: Queryable, texts: string[]): Queryable => ({
  query: (sql, params) => {
    texts.push(sql);
    return db.query(sql, params);
  },
  exec: (sql) => db.exec(sql),
});

before(async () => {
  instances = await startTwoInstances((db, instance) => {
    const cache =
      instance === "a"
        ? new GatedCredentialCache(counted(db, lookups[0]), Date.now)
        : new CredentialCache(counted(db, lookups[1]), Date.now);
    caches.push(cache);
    return { adminSecret: SECRET, credentials: cache };
  });
  ({ a, b, first } = instances);
});

after(() => instances?.close());

/** How many statements each instance's cache runs during `work`. */
async function queriesDuring(work: () => Promise<void>): Promise<[number, number]> {
  const before = lookups.map((texts) => texts.length);
  await work();
  return [lookups[0].length - (before[0] ?? 0), lookups[1].length - (before[1] ?? 0)];
}

const listContracts = (t: TestApp, dapp: { token: string; apiKey: string }) =>
  t.call("GET", "smart-contract", { token: dapp.token, apiKey: dapp.apiKey });
const listDapps = (t: TestApp, token: string) => t.call("GET", "paymasterParameters", { token });

function tokenRoute(t: TestApp, method: "POST" | "DELETE", accountId: string) {
  return t.app.inject({
    method,
    url: `/internal/accounts/${accountId}/token`,
    headers: { [ADMIN_SECRET_HEADER]: SECRET },
  });
}

/**
 * Asks until the answer has the status: the other instance hears of a change on PostgreSQL a moment after the commit
 * (the notification's trip), on PGlite before the write returns. Bounded: a change never heard fails the test.
 */
const answers = (what: string, ask: () => Promise<{ status: number }>, status: number) =>
  eventually(
    what,
    async () => (await ask()).status,
    (answered) => answered === status,
  );

/** A dApp known to both instances' caches. */
async function knownDapp(): Promise<Dapp> {
  const dapp = await a.dapp();
  for (const t of [a, b]) assert.equal((await listContracts(t, dapp)).status, 200);
  return dapp;
}

test("both caches listen from the start", () => {
  assert.deepEqual(
    caches.map((cache) => cache.listening),
    [true, true],
  );
});

test("a known token and apiKey are checked without a query, on each instance", async () => {
  const dapp = await a.dapp();
  const first = await queriesDuring(async () => {
    for (const t of [a, b]) assert.equal((await listContracts(t, dapp)).status, 200);
  });
  // Instance A already knows the account: it created the dApp.
  assert.deepEqual(first, [1, 2], "the first request of each instance reads what it does not know yet");
  const again = await queriesDuring(async () => {
    for (let i = 0; i < 5; i++) {
      for (const t of [a, b]) {
        assert.equal((await listContracts(t, dapp)).status, 200);
        assert.equal((await listDapps(t, dapp.token)).status, 200);
      }
    }
  });
  assert.deepEqual(again, [0, 0], "twenty more requests: no lookup at all");
});

test("a token or apiKey that is not accepted is never kept: each try reads the database", async () => {
  const dapp = await knownDapp();
  const wrongToken = `pm_${randomBytes(32).toString("base64url")}`;
  const counts = await queriesDuring(async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await listContracts(a, { token: wrongToken, apiKey: dapp.apiKey })).status, 401);
      assert.equal((await listContracts(a, { token: dapp.token, apiKey: "no-such-key" })).status, 401);
    }
  });
  assert.deepEqual(counts, [6, 0], "three wrong tokens and three wrong apiKeys: six lookups");
});

test("another account's apiKey is refused from the cache as from the database", async () => {
  const mine = await knownDapp();
  const theirs = await knownDapp();
  for (const t of [a, b]) {
    const reply = await listContracts(t, { token: mine.token, apiKey: theirs.apiKey });
    assert.equal(reply.status, 401);
  }
});

test("a rotated token is refused at once on this instance and as soon as the other hears of it; the new one works", async () => {
  const dapp = await knownDapp();
  const rotated = await tokenRoute(a, "POST", dapp.accountId);
  assert.equal(rotated.statusCode, 200, rotated.body);
  const body = rotated.json() as { message: string; data: { id: string; authToken: string } };
  assert.equal(body.message, "Token rotated");
  assert.equal(body.data.id, dapp.accountId);
  assert.notEqual(body.data.authToken, dapp.token);

  assert.equal((await listContracts(a, dapp)).status, 401, "this instance refuses the old token at once");
  await answers("B refuses the old token", () => listContracts(b, dapp), 401);
  for (const t of [a, b]) {
    assert.equal((await listContracts(t, { token: body.data.authToken, apiKey: dapp.apiKey })).status, 200);
  }
});

test("a revoked token is refused everywhere until a rotation gives the account a new one", async () => {
  const dapp = await knownDapp();
  const revoked = await tokenRoute(b, "DELETE", dapp.accountId);
  assert.deepEqual(
    [revoked.statusCode, revoked.json()],
    [200, { statusCode: 200, message: "Token revoked", data: { id: dapp.accountId } }],
  );
  assert.equal((await listContracts(b, dapp)).status, 401, "this instance refuses it at once");
  assert.equal((await listDapps(b, dapp.token)).status, 401);
  await answers("A refuses the revoked token", () => listContracts(a, dapp), 401);
  await answers("A refuses the revoked token's listing", () => listDapps(a, dapp.token), 401);

  const rotated = await tokenRoute(b, "POST", dapp.accountId);
  const token = (rotated.json() as { data: { authToken: string } }).data.authToken;
  for (const t of [a, b]) assert.equal((await listContracts(t, { token, apiKey: dapp.apiKey })).status, 200);
});

test("the token routes: an unknown or malformed account id is 404, a wrong secret 403", async () => {
  for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
    for (const method of ["POST", "DELETE"] as const) {
      const reply = await tokenRoute(a, method, id);
      assert.deepEqual([reply.statusCode, reply.json()], [404, { statusCode: 404, message: "Account not found" }]);
    }
  }
  const dapp = await knownDapp();
  const forbidden = await a.app.inject({
    method: "DELETE",
    url: `/internal/accounts/${dapp.accountId}/token`,
    headers: { [ADMIN_SECRET_HEADER]: "wrong" },
  });
  assert.equal(forbidden.statusCode, 403);
  assert.equal((await listContracts(a, dapp)).status, 200, "the token still works");
});

test("changes straight in the database, by no instance, are heard by both", async () => {
  const dapp = await knownDapp();
  const other = await knownDapp();
  // An operator's SQL: a deleted paymaster and a revoked token. Neither instance runs these writes.
  await first.query("DELETE FROM paymasters WHERE id = $1", [dapp.paymasterId]);
  for (const t of [a, b]) await answers("the deleted paymaster refused", () => listContracts(t, dapp), 401);
  await first.query("DELETE FROM account_tokens WHERE account_id = $1", [other.accountId]);
  for (const t of [a, b]) await answers("the revoked token refused", () => listDapps(t, other.token), 401);
});

test("a contract written through the other instance does not empty the cache (only credential columns notify)", async () => {
  const dapp = await knownDapp();
  const write = await b.call("POST", "smart-contract", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { name: "c", address: "0x000000000000000000000000000000000000dEaD", abi: "[]" },
  });
  assert.equal(write.status, 200, JSON.stringify(write.body));
  // Every notification committed so far has reached instance A (a barrier of its listener's own): had the write
  // notified, A would have forgotten the account by now. It must still answer from memory.
  await a.notificationsHeard();
  const counts = await queriesDuring(async () => {
    assert.equal((await listContracts(a, dapp)).status, 200);
  });
  assert.equal(counts[0], 0);
});

test("changes in another schema of the same database are not heard (notifications reach every schema)", {
  skip: url ? false : "PGlite holds one schema",
}, async () => {
  const dapp = await knownDapp();
  const witness = await knownDapp();
  const schema = `test_${randomBytes(6).toString("hex")}`;
  const admin = await openDatabase({ url: url as string });
  await admin.exec(`CREATE SCHEMA ${schema}`);
  const neighbour = await openDatabase({ url: url as string, schema });
  try {
    await migrate(neighbour);
    // The neighbour's account has the same id as ours: were its notification heard, ours would be forgotten.
    await neighbour.query("INSERT INTO accounts (id, name) VALUES ($1, 'neighbour')", [dapp.accountId]);
    await neighbour.query("UPDATE accounts SET name = 'renamed' WHERE id = $1", [dapp.accountId]);
    // Then a change of our own, sent after it on the same channel: once both instances have heard it, they have
    // heard (and ignored) the neighbour's too.
    await first.query("DELETE FROM account_tokens WHERE account_id = $1", [witness.accountId]);
    for (const t of [a, b]) await answers("the witness heard", () => listDapps(t, witness.token), 401);
    const counts = await queriesDuring(async () => {
      for (const t of [a, b]) assert.equal((await listContracts(t, dapp)).status, 200);
    });
    assert.deepEqual(counts, [0, 0], "both still answer from memory");
  } finally {
    await neighbour.close();
    await admin.exec(`DROP SCHEMA ${schema} CASCADE`);
    await admin.close();
  }
});

test("losing the listener empties the cache and stops it keeping anything until it listens again", {
  skip: url ? false : "PGlite's listener lives in this process and cannot be lost",
}, async () => {
  const dapp = await knownDapp();
  const cache = caches[0] as CredentialCache;
  const pid = cache.listenerPid;
  assert.ok(pid, "the listener's backend is known");
  reconnectGate.held = true;
  await first.query("SELECT pg_terminate_backend($1)", [pid]);
  await eventually(
    "the lost listener noticed",
    () => cache.listening,
    (listening) => !listening,
    { everyMs: 5 },
  );
  // While it is down, a revocation's notification is lost for this instance: it must read the database.
  await first.query("DELETE FROM account_tokens WHERE account_id = $1", [dapp.accountId]);
  const down = await queriesDuring(async () => {
    assert.equal((await listContracts(a, dapp)).status, 401);
  });
  assert.equal(down[0], 1, "the revoked token is read from the database, not from the emptied cache");

  const rotated = await tokenRoute(b, "POST", dapp.accountId);
  const token = (rotated.json() as { data: { authToken: string } }).data.authToken;
  const uncached = await queriesDuring(async () => {
    for (let i = 0; i < 2; i++) assert.equal((await listContracts(a, { token, apiKey: dapp.apiKey })).status, 200);
  });
  assert.deepEqual(uncached[0], 4, "nothing is kept while the listener is down");

  reconnectGate.held = false;
  reconnectGate.pendingUp?.();
  await eventually("the listener back", () => cache.listening, undefined, { everyMs: 5 });
  assert.notEqual(cache.listenerPid, pid, "a new connection listens");
  const back = await queriesDuring(async () => {
    for (let i = 0; i < 3; i++) assert.equal((await listContracts(a, { token, apiKey: dapp.apiKey })).status, 200);
  });
  assert.equal(back[0], 2, "listening again: the first request loads, the next two come from memory");
});

test("the cache is bounded: beyond its size the least recently used token is read again", async () => {
  const texts: string[] = [];
  const small = new CredentialCache(counted(first, texts), Date.now, 2);
  await small.follow(first, CREDENTIALS_CHANNEL);
  try {
    const tokens = await Promise.all([1, 2, 3].map(async () => (await a.account()).token));
    const [t1, t2, t3] = tokens as [string, string, string];
    for (const token of [t1, t2]) assert.ok(await small.account(token));
    assert.ok(await small.account(t1), "t1 becomes the most recently used");
    assert.equal(texts.length, 2, "two loads, then a hit");
    assert.ok(await small.account(t3), "a third token pushes out t2, the least recently used");
    assert.equal(texts.length, 3);
    assert.ok(await small.account(t1));
    assert.equal(texts.length, 3, "t1 is still kept");
    assert.ok(await small.account(t2));
    assert.equal(texts.length, 4, "t2 was dropped and is read again");
  } finally {
    await small.close();
  }
});
