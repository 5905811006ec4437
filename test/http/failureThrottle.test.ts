import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { DEFAULT_FAILURE_THROTTLE, loadConfig } from "../../src/config";
import { FailureThrottle } from "../../src/http/failureThrottle";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

const TOKEN_HEADER = "Auth token is required in the headers";
const throttled = (seconds: number) =>
  `Too many requests with wrong credentials from this address: try again in ${seconds} s`;

describe("FailureThrottle", () => {
  test("counts failures per address in fixed windows; 0 turns it off", () => {
    const throttle = new FailureThrottle({ maxFailures: 3, windowMs: 10_000 });
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.retryAfterSeconds("a", 1000), undefined);
      throttle.recordFailure("a", 1000 + i);
    }
    assert.equal(throttle.retryAfterSeconds("a", 1500), 10, "until the window that began at 1000 ms ends");
    assert.equal(throttle.retryAfterSeconds("a", 10_999), 1);
    assert.equal(throttle.retryAfterSeconds("a", 11_000), undefined, "a new window");
    assert.equal(throttle.retryAfterSeconds("b", 1500), undefined, "other addresses are not affected");
    throttle.recordFailure("a", 11_000);
    assert.equal(throttle.retryAfterSeconds("a", 11_001), undefined, "the count starts again");

    const off = new FailureThrottle({ maxFailures: 0, windowMs: 10_000 });
    for (let i = 0; i < 100; i++) off.recordFailure("a", 1000);
    assert.equal(off.retryAfterSeconds("a", 1000), undefined);
  });

  test("remembers a bounded number of addresses, dropping the oldest windows", () => {
    const throttle = new FailureThrottle({ maxFailures: 1, windowMs: 60_000 }, 100);
    for (let i = 0; i < 1000; i++) throttle.recordFailure(`10.0.${i >> 8}.${i & 255}`, 1000 + i);
    assert.equal(throttle.retryAfterSeconds("10.0.0.0", 2000), undefined, "the first address was dropped");
    assert.equal(throttle.retryAfterSeconds("10.0.3.231", 2000), 60, "the last one is remembered");
  });
});

describe("over HTTP, with the default settings", () => {
  let t: TestApp;
  let d: Dapp;
  before(async () => {
    assert.deepEqual(DEFAULT_FAILURE_THROTTLE, { maxFailures: 30, windowMs: 60_000 });
    assert.deepEqual(loadConfig({}).failureThrottle, DEFAULT_FAILURE_THROTTLE);
    t = await startTestApp({ failureThrottle: DEFAULT_FAILURE_THROTTLE });
    d = await t.dapp();
  });
  after(() => t.close());

  const management = (from: string, headers: Record<string, string>) =>
    t.app.inject({
      method: "GET",
      url: `${MANAGEMENT_PREFIX}/paymasterParameters`,
      headers,
      remoteAddress: from,
    });
  const rpc = (from: string, apiKey: string, chainId = 31337) =>
    t.app.inject({
      method: "POST",
      url: `/api/v1/${chainId}/${apiKey}`,
      headers: { "content-type": "application/json" },
      payload: { jsonrpc: "2.0", id: 3, method: "pm_sponsorUserOperation", params: [] },
      remoteAddress: from,
    });

  test("management: the 31st wrong authToken from an address gets 429 in the envelope, with Retry-After", async () => {
    for (let i = 0; i < 30; i++) {
      const reply = await management("203.0.113.1", { authToken: `pm_wrong${i}` });
      assert.deepEqual([reply.statusCode, reply.json()], [401, { statusCode: 401, message: TOKEN_HEADER }], `#${i}`);
    }
    const blocked = await management("203.0.113.1", { authToken: "pm_wrong" });
    assert.deepEqual([blocked.statusCode, blocked.json()], [429, { statusCode: 429, message: throttled(60) }]);
    assert.equal(blocked.headers["retry-after"], "60");

    // The right token from the throttled address is refused too: otherwise the answer would reveal a right guess.
    const right = await management("203.0.113.1", { authToken: d.token });
    assert.equal(right.statusCode, 429);
    // Another address is not affected, with right or wrong credentials.
    assert.equal((await management("203.0.113.2", { authToken: d.token })).statusCode, 200);
    assert.equal((await management("203.0.113.2", { authToken: "pm_wrong" })).statusCode, 401);
  });

  test("management: a wrong apiKey with a right token counts; a missing header does not", async () => {
    for (let i = 0; i < 30; i++) {
      const reply = await t.app.inject({
        method: "GET",
        url: `${MANAGEMENT_PREFIX}/webhook`,
        headers: { authToken: d.token, apiKey: `wrong${i}` },
        remoteAddress: "203.0.113.3",
      });
      assert.equal(reply.statusCode, 401);
    }
    assert.equal((await management("203.0.113.3", { authToken: d.token })).statusCode, 429);

    for (let i = 0; i < 60; i++) assert.equal((await management("203.0.113.4", {})).statusCode, 401);
    assert.equal((await management("203.0.113.4", { authToken: d.token })).statusCode, 200);
  });

  test("RPC: the 31st unknown apiKey from an address gets a JSON-RPC error with HTTP 429, Retry-After and CORS", async () => {
    for (let i = 0; i < 30; i++) assert.equal((await rpc("198.51.100.1", `wrong${i}`)).statusCode, 401);
    const blocked = await rpc("198.51.100.1", "wrong");
    assert.deepEqual(
      [blocked.statusCode, blocked.json()],
      [429, { jsonrpc: "2.0", id: null, error: { code: -32005, message: throttled(60) } }],
    );
    assert.equal(blocked.headers["retry-after"], "60");
    assert.equal(blocked.headers["access-control-allow-origin"], "*");
    assert.equal((await rpc("198.51.100.1", d.apiKey)).statusCode, 429, "the right apiKey too");
    // Another wallet's address is unaffected: its call reaches the method (400: no params).
    assert.equal((await rpc("198.51.100.2", d.apiKey)).statusCode, 400);
    // The preflight is never throttled.
    const preflight = await t.app.inject({
      method: "OPTIONS",
      url: `/api/v1/31337/${d.apiKey}`,
      remoteAddress: "198.51.100.1",
    });
    assert.equal(preflight.statusCode, 204);
  });

  test("RPC: an unsupported chain or another chain's apiKey does not count", async () => {
    for (let i = 0; i < 40; i++) {
      assert.equal((await rpc("198.51.100.3", d.apiKey, 1)).statusCode, 404);
      assert.equal((await rpc("198.51.100.3", d.apiKey, 80002)).statusCode, 404);
    }
    assert.equal((await rpc("198.51.100.3", d.apiKey)).statusCode, 400);
  });
});

describe("configured: a short window, and addresses from a trusted proxy", () => {
  let t: TestApp;
  let d: Dapp;
  // The service's clock: the test moves it past the window instead of waiting.
  let clockMs = Date.now();
  before(async () => {
    t = await startTestApp({
      failureThrottle: { maxFailures: 2, windowMs: 1000 },
      trustProxy: ["127.0.0.1"],
      now: () => clockMs,
    });
    d = await t.dapp();
  });
  after(() => t.close());

  const from = (client: string, token: string) =>
    t.app.inject({
      method: "GET",
      url: `${MANAGEMENT_PREFIX}/paymasterParameters`,
      headers: { authToken: token, "x-forwarded-for": client },
      remoteAddress: "127.0.0.1",
    });

  test("each client behind the proxy has its own count, and the window ends", async () => {
    assert.equal((await from("192.0.2.10", "pm_wrong")).statusCode, 401);
    assert.equal((await from("192.0.2.10", "pm_wrong")).statusCode, 401);
    const blocked = await from("192.0.2.10", d.token);
    assert.equal(blocked.statusCode, 429);
    assert.equal(blocked.headers["retry-after"], "1");
    assert.equal((await from("192.0.2.11", d.token)).statusCode, 200, "another client of the same proxy");
    clockMs += 999;
    assert.equal((await from("192.0.2.10", d.token)).statusCode, 429, "still inside the window");
    clockMs += 101;
    assert.equal((await from("192.0.2.10", d.token)).statusCode, 200, "after the window");
  });
});
