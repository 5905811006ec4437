// The event endpoints' management API: create (the secret once, stored sealed), list, show, change, delete, rotate,
// the address guard's 400 naming the field, the read scope's 403 on every write, and the audit log's masked secret.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addEndpoint } from "./helpers";

let t: TestApp;
let dapp: Dapp;

before(async () => {
  t = await startTestApp();
  dapp = await t.dapp();
});
after(() => t.close());

const as = (who: Dapp, extra: { body?: unknown; query?: Record<string, string> } = {}) => ({
  token: who.token,
  apiKey: who.apiKey,
  ...extra,
});

describe("event endpoints", () => {
  test("creation answers the secret once; the database keeps it sealed; reads never show it", async () => {
    const created = await addEndpoint(t, dapp, "https://hooks.example.com/events", [
      "sponsorship.signed",
      "sponsorship.included",
    ]);
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(created.events, ["sponsorship.signed", "sponsorship.included"]);
    assert.equal(created.enabled, true);

    const [stored] = await t.db.query<{ secret: string }>("SELECT secret FROM event_endpoints WHERE id = $1", [
      created.id,
    ]);
    assert.ok(stored);
    assert.ok(!stored.secret.includes(created.secret.slice("whsec_".length)), "stored in clear");
    assert.match(stored.secret, /^v1\./);

    const list = await t.call("GET", "event-endpoints", as(dapp));
    assert.equal(list.status, 200);
    const shown = JSON.stringify(list.body);
    assert.ok(shown.includes(created.id));
    assert.ok(!shown.includes('secret"'), shown);
    const one = await t.call("GET", `event-endpoints/${created.id}`, as(dapp));
    assert.equal(one.status, 200);
    assert.equal((one.body.data as { url: string }).url, "https://hooks.example.com/events");
    assert.equal((one.body.data as { pending: number }).pending, 0);
  });

  test("a URL the address guard refuses is a 400 naming url, at creation and at a change", async () => {
    const refused = await t.call(
      "POST",
      "event-endpoints",
      as(dapp, { body: { url: "http://192.0.2.7/hook", events: ["sponsorship.signed"] } }),
    );
    assert.equal(refused.status, 400);
    assert.equal(refused.body.message, "url is 192.0.2.7, a documentation address");
    const notHttp = await t.call(
      "POST",
      "event-endpoints",
      as(dapp, { body: { url: "ftp://hooks.example.com/", events: ["sponsorship.signed"] } }),
    );
    assert.equal(notHttp.body.message, "url must be an http or https URL");

    const created = await addEndpoint(t, dapp, "https://hooks.example.com/change");
    const changed = await t.call(
      "PATCH",
      `event-endpoints/${created.id}`,
      as(dapp, { body: { url: "http://[ff02::1]/hook" } }),
    );
    assert.equal(changed.status, 400);
    assert.equal(changed.body.message, "url is ff02::1, a multicast address");
  });

  test("events are checked by name, at least one; one named twice counts once", async () => {
    const cases: [unknown, string][] = [
      [["sponsorship.mined"], "events[0] must be one of sponsorship.signed"],
      [[], "events must name at least one event"],
      ["deposit.low", "events must be a list of events"],
    ];
    for (const [events, message] of cases) {
      const reply = await t.call(
        "POST",
        "event-endpoints",
        as(dapp, { body: { url: "https://hooks.example.com/x", events } }),
      );
      assert.equal(reply.status, 400, JSON.stringify(events));
      assert.ok(reply.body.message.startsWith(message), reply.body.message);
    }
    const twice = await addEndpoint(t, dapp, "https://hooks.example.com/twice", ["deposit.low", "deposit.low"]);
    assert.deepEqual(twice.events, ["deposit.low"]);
  });

  test("PATCH changes the url, the events and whether it is on; DELETE removes it; unknown ids are 404", async () => {
    const created = await addEndpoint(t, dapp, "https://hooks.example.com/a");
    const reply = await t.call(
      "PATCH",
      `event-endpoints/${created.id}`,
      as(dapp, {
        body: { url: "https://hooks.example.com/b", events: ["deposit.low", "limit.reached"], enabled: false },
      }),
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const view = reply.body.data as { url: string; events: string[]; enabled: boolean };
    assert.deepEqual(
      { url: view.url, events: view.events, enabled: view.enabled },
      { url: "https://hooks.example.com/b", events: ["deposit.low", "limit.reached"], enabled: false },
    );

    const deleted = await t.call("DELETE", `event-endpoints/${created.id}`, as(dapp));
    assert.equal(deleted.status, 200);
    for (const [method, path] of [
      ["GET", `event-endpoints/${created.id}`],
      ["DELETE", `event-endpoints/${created.id}`],
      ["GET", "event-endpoints/not-a-uuid"],
      ["GET", `event-endpoints/${created.id}/deliveries`],
    ] as const) {
      const missing = await t.call(method, path, as(dapp));
      assert.equal(missing.status, 404, `${method} ${path}`);
      assert.equal(missing.body.message, "Event endpoint not found");
    }

    // Another dApp's endpoint is not found either.
    const other = await t.dapp();
    const theirs = await addEndpoint(t, other, "https://hooks.example.com/theirs");
    const foreign = await t.call("GET", `event-endpoints/${theirs.id}`, as(dapp));
    assert.equal(foreign.status, 404);
  });

  test("rotation answers a new secret and keeps the old one signing until the grace period ends", async () => {
    const created = await addEndpoint(t, dapp, "https://hooks.example.com/rotate");
    const before = Date.now();
    const reply = await t.call(
      "POST",
      `event-endpoints/${created.id}/rotate-secret`,
      as(dapp, { body: { graceSeconds: 3600 } }),
    );
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const rotated = reply.body.data as { secret: string; previousSecretUntil: number };
    assert.notEqual(rotated.secret, created.secret);
    assert.ok(rotated.previousSecretUntil >= before + 3_600_000);

    const bad = await t.call(
      "POST",
      `event-endpoints/${created.id}/rotate-secret`,
      as(dapp, { body: { graceSeconds: -1 } }),
    );
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, "graceSeconds must be a whole number of seconds from 0 to 604800");

    const again = await t.call(
      "POST",
      `event-endpoints/${created.id}/rotate-secret`,
      as(dapp, { body: { graceSeconds: 0 } }),
    );
    assert.equal((again.body.data as { previousSecretUntil: number | null }).previousSecretUntil, null);
  });

  test("a read-scoped token may read the endpoints but not create, change, rotate, replay or delete one", async () => {
    const created = await addEndpoint(t, dapp, "https://hooks.example.com/read");
    const token = await t.call("POST", "tokens", { token: dapp.token, body: { name: "reader", scope: "read" } });
    assert.equal(token.status, 200, JSON.stringify(token.body));
    const reader = { ...dapp, token: (token.body.data as { authToken: string }).authToken };

    assert.equal((await t.call("GET", "event-endpoints", as(reader))).status, 200);
    assert.equal((await t.call("GET", `event-endpoints/${created.id}/deliveries`, as(reader))).status, 200);
    const writes: [string, string, unknown][] = [
      ["POST", "event-endpoints", { url: "https://hooks.example.com/r", events: ["sponsorship.signed"] }],
      ["PATCH", `event-endpoints/${created.id}`, { enabled: false }],
      ["POST", `event-endpoints/${created.id}/rotate-secret`, { graceSeconds: 0 }],
      ["POST", `event-endpoints/${created.id}/replay`, { from: 0, to: 1 }],
      ["DELETE", `event-endpoints/${created.id}`, undefined],
    ];
    for (const [method, path, body] of writes) {
      const reply = await t.call(method, path, as(reader, { body }));
      assert.equal(reply.status, 403, `${method} ${path}`);
    }
    const still = await t.call("GET", `event-endpoints/${created.id}`, as(dapp));
    assert.equal((still.body.data as { enabled: boolean }).enabled, true);
  });

  test("every write is in the audit log, the secrets masked", async () => {
    const created = await addEndpoint(t, dapp, "https://user:pass@hooks.example.com/audit?token=abc");
    await t.call("POST", `event-endpoints/${created.id}/rotate-secret`, as(dapp, { body: { graceSeconds: 60 } }));
    await t.call("PATCH", `event-endpoints/${created.id}`, as(dapp, { body: { enabled: false } }));
    const entries = await t.db.query<{ method: string; path: string; changes: unknown }>(
      "SELECT method, path, changes FROM audit_log WHERE path LIKE $1 ORDER BY id",
      [`%event-endpoints%${created.id}%`],
    );
    const [creation] = await t.db.query<{ changes: unknown }>(
      "SELECT changes FROM audit_log WHERE changes::text LIKE $1 ORDER BY id LIMIT 1",
      [`%${created.id}%`],
    );
    assert.ok(creation);
    assert.deepEqual(
      entries.map((entry) => `${entry.method} ${entry.path.replace(created.id, ":id")}`),
      ["POST /api/v2/public/sdk/event-endpoints/:id/rotate-secret", "PATCH /api/v2/public/sdk/event-endpoints/:id"],
    );
    const logged = JSON.stringify([creation, ...entries]);
    assert.ok(logged.includes('"secret": "***"') || logged.includes('"secret":"***"'), logged);
    assert.ok(logged.includes("previous_secret"), logged);
    assert.ok(!logged.includes("v1."), "a sealed secret reached the audit log");
    assert.ok(!logged.includes("whsec_"), "a secret reached the audit log");
    assert.ok(!logged.includes("pass@") && !logged.includes("token=abc"), "the URL's credentials were not masked");
  });
});
