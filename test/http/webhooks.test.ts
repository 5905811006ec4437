import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Dapp, type Reply, startTestApp, type TestApp } from "../helpers/app";
import { missingCredentials, wrongCredentials } from "../helpers/badCredentials";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";
const AUTH_MESSAGE = "Auth token and API key is required in the headers";

interface WebhookRecord {
  webhookId: string;
  webhookUrl: string;
  requestType: string;
  active: boolean;
}

const auth = (d: Dapp) => ({ token: d.token, apiKey: d.apiKey });
const create = (d: Dapp, body: unknown) => t.call("POST", "webhook", { ...auth(d), body });
const get = (d: Dapp, webhookId?: string) =>
  t.call("GET", "webhook", { ...auth(d), query: webhookId === undefined ? undefined : { webhookId } });
const patch = (d: Dapp, body: unknown) => t.call("PATCH", "webhook", { ...auth(d), body });
const remove = (d: Dapp, body: unknown) => t.call("DELETE", "webhook", { ...auth(d), body });

function assertError(reply: Reply, status: number, message: string): void {
  assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }]);
}

async function list(d: Dapp): Promise<WebhookRecord[]> {
  const reply = await get(d);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Webhook list fetched");
  return reply.body.data as WebhookRecord[];
}

async function created(d: Dapp, webhookUrl = "https://hooks.example.com/verify", requestType = "POST") {
  const reply = await create(d, { webhookUrl, requestType });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return (reply.body.data as WebhookRecord).webhookId;
}

/** Asserts the refusal, then that the dApp's webhooks are exactly what they were before the request. */
async function assertRefused(d: Dapp, request: () => Promise<Reply>, status: number, message: string) {
  const before = await list(d);
  assertError(await request(), status, message);
  assert.deepEqual(await list(d), before, "a refused request writes nothing");
}

describe("create webhook (endpoint 15)", () => {
  for (const requestType of ["POST", "GET"]) {
    test(`registers a ${requestType} webhook, active from the start`, async () => {
      const d = await t.dapp();
      const reply = await create(d, { webhookUrl: "https://hooks.example.com/verify?team=7", requestType });
      assert.equal(reply.status, 200);
      const data = reply.body.data as WebhookRecord;
      assert.match(data.webhookId, UUID);
      assert.deepEqual(reply.body, {
        statusCode: 200,
        message: "Webhook created",
        data: {
          webhookId: data.webhookId,
          webhookUrl: "https://hooks.example.com/verify?team=7",
          requestType,
          active: true,
        },
      });
      assert.deepEqual(await list(d), [data]);
    });
  }

  test("http addresses, ports and two webhooks with the same address are accepted", async () => {
    const d = await t.dapp();
    const a = await created(d, "http://127.0.0.1:9000/hook", "GET");
    const b = await created(d, "http://127.0.0.1:9000/hook", "POST");
    assert.notEqual(a, b);
    assert.deepEqual(
      (await list(d)).map((w) => [w.webhookId, w.webhookUrl, w.requestType]),
      [
        [a, "http://127.0.0.1:9000/hook", "GET"],
        [b, "http://127.0.0.1:9000/hook", "POST"],
      ],
    );
  });

  test("a body that is not a JSON object is refused", async () => {
    const d = await t.dapp();
    for (const body of [["https://a.example"], "https://a.example", 1, null]) {
      await assertRefused(d, () => create(d, body), 400, "Request body must be a JSON object");
    }
    await assertRefused(d, () => t.call("POST", "webhook", auth(d)), 400, "Request body must be a JSON object");
  });

  const valid = { webhookUrl: "https://hooks.example.com/verify", requestType: "POST" };
  for (const [label, body, message] of [
    ["webhookUrl missing", { ...valid, webhookUrl: undefined }, "webhookUrl is required"],
    ["webhookUrl null", { ...valid, webhookUrl: null }, "webhookUrl is required"],
    ["webhookUrl a number", { ...valid, webhookUrl: 42 }, "webhookUrl must be a string"],
    ["webhookUrl empty", { ...valid, webhookUrl: "" }, "webhookUrl must not be empty"],
    ["webhookUrl not a URL", { ...valid, webhookUrl: "not a url" }, "webhookUrl must be a valid URL"],
    ["webhookUrl without scheme", { ...valid, webhookUrl: "hooks.example.com/x" }, "webhookUrl must be a valid URL"],
    [
      "webhookUrl ftp",
      { ...valid, webhookUrl: "ftp://hooks.example.com/x" },
      "webhookUrl must be an http or https URL",
    ],
    ["webhookUrl ws", { ...valid, webhookUrl: "ws://hooks.example.com/x" }, "webhookUrl must be an http or https URL"],
    ["webhookUrl mailto", { ...valid, webhookUrl: "mailto:a@example.com" }, "webhookUrl must be an http or https URL"],
    [
      "webhookUrl too long",
      { ...valid, webhookUrl: `https://hooks.example.com/${"a".repeat(2048)}` },
      "webhookUrl must be at most 2048 characters",
    ],
    ["requestType missing", { ...valid, requestType: undefined }, "requestType is required"],
    ["requestType a number", { ...valid, requestType: 1 }, "requestType must be a string"],
    ["requestType PUT", { ...valid, requestType: "PUT" }, "requestType must be one of GET, POST"],
    ["requestType DELETE", { ...valid, requestType: "DELETE" }, "requestType must be one of GET, POST"],
    ["requestType lowercase", { ...valid, requestType: "post" }, "requestType must be one of GET, POST"],
  ] as const) {
    test(`bad input: ${label} → 400 "${message}"`, async () => {
      const d = await t.dapp();
      await created(d);
      await assertRefused(d, () => create(d, body), 400, message);
    });
  }
});

describe("get webhooks (endpoint 16)", () => {
  test("without webhookId: all of the dApp's webhooks in creation order, none of another dApp's", async () => {
    const d = await t.dapp();
    const sibling = await t.dapp({ token: d.token });
    const stranger = await t.dapp();
    assert.deepEqual(await list(d), []);
    const first = await created(d, "https://a.example.com/1", "POST");
    await created(sibling, "https://sibling.example.com/", "POST");
    await created(stranger, "https://stranger.example.com/", "GET");
    const second = await created(d, "https://a.example.com/2", "GET");
    const reply = await get(d);
    assert.deepEqual(reply.body, {
      statusCode: 200,
      message: "Webhook list fetched",
      data: [
        { webhookId: first, webhookUrl: "https://a.example.com/1", requestType: "POST", active: true },
        { webhookId: second, webhookUrl: "https://a.example.com/2", requestType: "GET", active: true },
      ],
    });
  });

  test("with webhookId: that webhook only", async () => {
    const d = await t.dapp();
    await created(d, "https://a.example.com/1");
    const second = await created(d, "https://a.example.com/2", "GET");
    const reply = await get(d, second);
    assert.deepEqual(
      [reply.status, reply.body],
      [
        200,
        {
          statusCode: 200,
          message: "Webhook list fetched",
          data: [{ webhookId: second, webhookUrl: "https://a.example.com/2", requestType: "GET", active: true }],
        },
      ],
    );
  });

  test("the body the interface sends on GET (webhookUrl: '') is ignored", async () => {
    const d = await t.dapp();
    const id = await created(d);
    const reply = await t.call("GET", "webhook", { ...auth(d), query: { webhookId: id }, body: { webhookUrl: "" } });
    assert.equal(reply.status, 200);
    assert.equal((reply.body.data as WebhookRecord[])[0]?.webhookId, id);
  });

  test("an unknown, non-UUID, empty or foreign webhookId is 404 Webhook not found", async () => {
    const d = await t.dapp();
    const sibling = await t.dapp({ token: d.token });
    const stranger = await t.dapp();
    await created(d);
    const siblings = await created(sibling);
    const strangers = await created(stranger);
    for (const id of [
      UNKNOWN_ID,
      "not-a-uuid",
      "",
      "1",
      UNKNOWN_ID.toUpperCase().replace("4000", "5000"),
      siblings,
      strangers,
    ]) {
      assertError(await get(d, id), 404, "Webhook not found");
    }
  });

  test("a missing or unaccepted authToken or apiKey gets 401 Auth token is required in the headers", async () => {
    const d = await t.dapp();
    const stranger = await t.dapp();
    for (const headers of [
      {},
      { apiKey: d.apiKey },
      { token: d.token },
      { token: "pm_not-a-real-token", apiKey: d.apiKey },
      { token: stranger.token, apiKey: d.apiKey },
    ]) {
      assertError(await t.call("GET", "webhook", headers), 401, "Auth token is required in the headers");
    }
  });
});

describe("activate or deactivate a webhook (endpoint 17)", () => {
  test("sets active to false and back to true, visible in GET; only that webhook changes", async () => {
    const d = await t.dapp();
    const id = await created(d);
    const other = await created(d, "https://hooks.example.com/other");
    const off = await patch(d, { webhookId: id, active: false });
    assert.deepEqual([off.status, off.body], [200, { statusCode: 200, message: "Webhook updated" }]);
    assert.deepEqual(
      (await list(d)).map((w) => [w.webhookId, w.active]),
      [
        [id, false],
        [other, true],
      ],
    );
    assert.equal(((await get(d, id)).body.data as WebhookRecord[])[0]?.active, false);
    const again = await patch(d, { webhookId: id, active: false });
    assert.equal(again.status, 200, "setting the same state again is fine");
    const on = await patch(d, { webhookId: id, active: true });
    assert.deepEqual([on.status, on.body], [200, { statusCode: 200, message: "Webhook updated" }]);
    assert.deepEqual(
      (await list(d)).map((w) => [w.webhookId, w.active]),
      [
        [id, true],
        [other, true],
      ],
    );
  });

  for (const active of ["true", "false", 1, 0, null, [], {}]) {
    test(`active = ${JSON.stringify(active)} → 400 active must be a boolean value`, async () => {
      const d = await t.dapp();
      const id = await created(d);
      await assertRefused(d, () => patch(d, { webhookId: id, active }), 400, "active must be a boolean value");
    });
  }

  test("active missing → 400 active must be a boolean value", async () => {
    const d = await t.dapp();
    const id = await created(d);
    await assertRefused(d, () => patch(d, { webhookId: id }), 400, "active must be a boolean value");
  });

  for (const [label, body] of [
    ["a number", { webhookId: 5, active: false }],
    ["missing", { active: false }],
    ["null", { webhookId: null, active: false }],
    ["an array", { webhookId: ["x"], active: false }],
    ["missing, active missing too", {}],
  ] as const) {
    test(`webhookId ${label} → 400 webhookId must be a string`, async () => {
      const d = await t.dapp();
      await created(d);
      await assertRefused(d, () => patch(d, body), 400, "webhookId must be a string");
    });
  }

  test("no body at all, or an empty JSON body, is a missing webhookId", async () => {
    const d = await t.dapp();
    await created(d);
    await assertRefused(d, () => t.call("PATCH", "webhook", auth(d)), 400, "webhookId must be a string");
    await assertRefused(
      d,
      () => t.call("PATCH", "webhook", { ...auth(d), raw: { payload: "", contentType: "application/json" } }),
      400,
      "webhookId must be a string",
    );
  });

  test("an unknown, non-UUID or foreign webhookId is 404 Webhook not found, and nothing changes", async () => {
    const d = await t.dapp();
    const stranger = await t.dapp();
    await created(d);
    const strangers = await created(stranger);
    const strangerBefore = await list(stranger);
    for (const webhookId of [UNKNOWN_ID, "not-a-uuid", "", strangers]) {
      await assertRefused(d, () => patch(d, { webhookId, active: false }), 404, "Webhook not found");
    }
    assert.deepEqual(await list(stranger), strangerBefore);
  });

  test("a body that is not a JSON object is refused", async () => {
    const d = await t.dapp();
    await created(d);
    for (const body of [[1], "x", null]) {
      await assertRefused(d, () => patch(d, body), 400, "Request body must be a JSON object");
    }
  });
});

describe("delete a webhook (endpoint 18)", () => {
  test("deletes it: GET by id is then 404 and the list no longer has it", async () => {
    const d = await t.dapp();
    const id = await created(d);
    const kept = await created(d, "https://hooks.example.com/kept", "GET");
    const reply = await remove(d, { webhookId: id });
    assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Webhook deleted" }]);
    assertError(await get(d, id), 404, "Webhook not found");
    assert.deepEqual(
      (await list(d)).map((w) => w.webhookId),
      [kept],
    );
    assertError(await remove(d, { webhookId: id }), 404, "Webhook not found");
    assertError(await patch(d, { webhookId: id, active: true }), 404, "Webhook not found");
  });

  for (const [label, body] of [
    ["a number", { webhookId: 7 }],
    ["missing", {}],
    ["null", { webhookId: null }],
    ["an object", { webhookId: { id: "x" } }],
    ["a boolean", { webhookId: true }],
  ] as const) {
    test(`webhookId ${label} → 400 webhookId must be a string`, async () => {
      const d = await t.dapp();
      await created(d);
      await assertRefused(d, () => remove(d, body), 400, "webhookId must be a string");
    });
  }

  test("no body at all, or an empty JSON body, is a missing webhookId", async () => {
    const d = await t.dapp();
    await created(d);
    await assertRefused(d, () => t.call("DELETE", "webhook", auth(d)), 400, "webhookId must be a string");
    await assertRefused(
      d,
      () => t.call("DELETE", "webhook", { ...auth(d), raw: { payload: "", contentType: "application/json" } }),
      400,
      "webhookId must be a string",
    );
  });

  test("a body that is not a JSON object is refused", async () => {
    const d = await t.dapp();
    await created(d);
    for (const body of [[1], "x", null, 3]) {
      await assertRefused(d, () => remove(d, body), 400, "Request body must be a JSON object");
    }
  });

  test("an unknown, non-UUID or foreign webhookId is 404 Webhook not found, and nothing is deleted", async () => {
    const d = await t.dapp();
    const sibling = await t.dapp({ token: d.token });
    await created(d);
    const siblings = await created(sibling);
    for (const webhookId of [UNKNOWN_ID, "not-a-uuid", "", siblings]) {
      await assertRefused(d, () => remove(d, { webhookId }), 404, "Webhook not found");
    }
    assert.deepEqual(
      (await list(sibling)).map((w) => w.webhookId),
      [siblings],
    );
  });
});

describe("authentication of endpoints 15, 17 and 18", () => {
  test("a missing, unknown or foreign authToken or apiKey gets 401 and writes nothing", async () => {
    const d = await t.dapp();
    const stranger = await t.dapp();
    const id = await created(d);
    const before = await list(d);
    for (const headers of [...missingCredentials(d), ...wrongCredentials(d, stranger)]) {
      for (const [method, body] of [
        ["POST", { webhookUrl: "https://intruder.example.com/", requestType: "POST" }],
        ["PATCH", { webhookId: id, active: false }],
        ["DELETE", { webhookId: id }],
      ] as const) {
        assertError(await t.call(method, "webhook", { ...headers, body }), 401, AUTH_MESSAGE);
      }
    }
    assert.deepEqual(await list(d), before);
    assert.deepEqual(await list(stranger), []);
  });
});
