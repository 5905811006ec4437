import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Lookup } from "../../src/webhooks/addressGuard";
import { type CallOptions, callWebhook, MAX_RESPONSE_BYTES } from "../../src/webhooks/call";
import { registeredWebhookRequest, webhookRuleRequest } from "../../src/webhooks/requests";
import {
  SIGNATURE_HEADER,
  signWebhook,
  TIMESTAMP_HEADER,
  verifyWebhookSignature,
  webhookSecret,
} from "../../src/webhooks/signature";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

let server: WebhookServer;
before(async () => {
  server = await startWebhookServer();
});
after(() => server.close());

const masterKey = Buffer.alloc(32, 7);
const secret = webhookSecret(masterKey, "7d1b2a3c-0000-4000-8000-000000000001");
const options = (overrides: Partial<CallOptions> = {}): CallOptions => ({
  guard: { allowPrivate: true },
  timeoutMs: 2000,
  secret,
  nowMs: Date.now,
  ...overrides,
});
/** The receiver's check on the wall clock, which these calls are signed by (options' nowMs). */
const verified = (key: string, header: string, timestamp: string, text: string) =>
  verifyWebhookSignature(key, header, timestamp, text, { nowSeconds: Math.floor(Date.now() / 1000) });
const post = (path: string, body = '{"data":{}}') => ({ method: "POST" as const, url: server.url(path), body });

describe("the verdict", () => {
  for (const [path, expected] of [
    ["/true", { ok: true, status: 200 }],
    ["/old-spelling", { ok: true, status: 200 }],
    ["/false", { ok: false, reason: "arePoliciesVerified false", status: 200 }],
    ["/old-spelling-false", { ok: false, reason: "arePoliciesVerified false", status: 200 }],
    ["/string-true", { ok: false, reason: "response has no boolean arePoliciesVerified", status: 200 }],
    ["/missing", { ok: false, reason: "response has no boolean arePoliciesVerified", status: 200 }],
    ["/array", { ok: false, reason: "response is not a JSON object", status: 200 }],
    ["/invalid-json", { ok: false, reason: "invalid JSON", status: 200 }],
    ["/status-500", { ok: false, reason: "status 500", status: 500 }],
    ["/status-404", { ok: false, reason: "status 404", status: 404 }],
    ["/oversized", { ok: false, reason: `response larger than ${MAX_RESPONSE_BYTES} bytes`, status: 200 }],
    ["/oversized-stream", { ok: false, reason: `response larger than ${MAX_RESPONSE_BYTES} bytes`, status: 200 }],
    ["/hang-up", { ok: false, reason: "connection reset" }],
  ] as const) {
    test(`${path} → ${"reason" in expected ? expected.reason : "verified"}`, async () => {
      assert.deepEqual(await callWebhook(post(path), options()), expected);
    });
  }

  test("redirects are not followed: the target is never called", async () => {
    for (const path of ["/redirect", "/redirect-307"]) {
      const before = server.callsTo("/true").length;
      const status = path === "/redirect" ? 302 : 307;
      assert.deepEqual(await callWebhook(post(path), options()), {
        ok: false,
        reason: `redirect not followed (status ${status})`,
        status,
      });
      // The call is over once it has answered, and a redirect it followed would have been part of it: the receiver
      // records a request before it answers, and the answer would then have been the target's verdict.
      assert.equal(server.callsTo("/true").length, before, "the redirect target was not called");
    }
  });

  test("a connection refused is a refusal, not an error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await callWebhook({ method: "POST", url: `http://127.0.0.1:${port}/`, body: "{}" }, options());
    assert.deepEqual(result, { ok: false, reason: "connection refused" });
  });
});

/** A self-signed certificate for `hooks.test`, when openssl is at hand. */
function selfSigned(): { key: Buffer; cert: Buffer } | undefined {
  const dir = mkdtempSync(path.join(tmpdir(), "paymaster-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=hooks.test"],
        ...["-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")],
      ],
      { stdio: "ignore" },
    );
  } catch {
    return undefined;
  }
  return { key: readFileSync(path.join(dir, "key.pem")), cert: readFileSync(path.join(dir, "cert.pem")) };
}

test("https: certificates are verified (a self-signed one refuses)", async (t) => {
  const tls = selfSigned();
  if (!tls) return t.skip("openssl is not available");
  const secure = createHttpsServer(tls, (_request, response) => response.end('{"arePoliciesVerified":true}'));
  await new Promise<void>((resolve) => secure.listen(0, "127.0.0.1", resolve));
  const port = (secure.address() as AddressInfo).port;
  const lookup: Lookup = async () => [{ address: "127.0.0.1", family: 4 }];
  const result = await callWebhook(
    { method: "POST", url: `https://hooks.test:${port}/`, body: "{}" },
    options({ lookup }),
  );
  secure.closeAllConnections();
  await new Promise((resolve) => secure.close(resolve));
  assert.deepEqual(result, { ok: false, reason: "TLS failed (DEPTH_ZERO_SELF_SIGNED_CERT)" });
});

describe("the timeout bounds the whole call", () => {
  for (const path of ["/slow", "/slow-body"]) {
    test(`${path}: refused after the timeout, within 500 ms of it`, async () => {
      const timeoutMs = 300;
      const started = performance.now();
      const result = await callWebhook(post(path), options({ timeoutMs }));
      const elapsed = performance.now() - started;
      assert.deepEqual(result, { ok: false, reason: "timed out after 300 ms" });
      assert.ok(elapsed >= timeoutMs - 5, `not before the timeout (${elapsed.toFixed(1)} ms)`);
      assert.ok(elapsed < timeoutMs + 500, `took ${elapsed.toFixed(1)} ms`);
    });
  }

  test("the default of 2 s, and DNS counts too", async () => {
    const started = performance.now();
    const result = await callWebhook(post("/slow"), options());
    const elapsed = performance.now() - started;
    assert.deepEqual(result, { ok: false, reason: "timed out after 2000 ms" });
    assert.ok(elapsed >= 1995 && elapsed < 2500, `took ${elapsed.toFixed(1)} ms`);

    const hangingDns: Lookup = () => new Promise(() => {});
    const dnsStarted = performance.now();
    const viaDns = await callWebhook(
      { method: "POST", url: "http://hooks.example.com/", body: "{}" },
      options({ timeoutMs: 200, lookup: hangingDns }),
    );
    assert.deepEqual(viaDns, { ok: false, reason: "timed out after 200 ms" });
    assert.ok(performance.now() - dnsStarted < 700);
  });

  test("fifty misbehaving calls at once all end, none throws", async () => {
    const paths = ["/slow", "/slow-body", "/status-500", "/invalid-json", "/redirect", "/oversized-stream", "/hang-up"];
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        callWebhook(post(paths[i % paths.length] as string), options({ timeoutMs: 300 })),
      ),
    );
    assert.ok(results.every((result) => !result.ok));
    assert.ok(performance.now() - started < 800);
  });
});

describe("the address guard runs before every call", () => {
  test("a loopback webhook is refused without a request when private addresses are not allowed", async () => {
    const before = server.calls.length;
    const result = await callWebhook(post("/true"), options({ guard: { allowPrivate: false } }));
    assert.deepEqual(result, { ok: false, reason: "is 127.0.0.1, a loopback address" });
    assert.equal(server.calls.length, before);
  });

  test("the connection goes to the address that was checked, not to a second DNS answer", async () => {
    // The system resolver knows no `rebind.test`: the call can only succeed by connecting to the checked address.
    let lookups = 0;
    const lookup: Lookup = async () => {
      lookups++;
      return [{ address: "127.0.0.1", family: 4 }];
    };
    const url = `http://rebind.test:${server.port}/true`;
    const result = await callWebhook({ method: "POST", url, body: "{}" }, options({ lookup }));
    assert.deepEqual(result, { ok: true, status: 200 });
    assert.equal(lookups, 1);
    assert.equal(server.calls.at(-1)?.headers.host, `rebind.test:${server.port}`);

    const blocked: Lookup = async () => [{ address: "10.0.0.7", family: 4 }];
    const refused = await callWebhook(
      { method: "POST", url: "http://rebind.test/true", body: "{}" },
      options({ guard: { allowPrivate: false }, lookup: blocked }),
    );
    assert.deepEqual(refused, { ok: false, reason: "resolves to 10.0.0.7, a private address" });
  });

  test("a name that does not resolve refuses", async () => {
    const lookup: Lookup = async () => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND"), { code: "ENOTFOUND" });
    };
    const result = await callWebhook({ method: "GET", url: "https://gone.example.com/" }, options({ lookup }));
    assert.deepEqual(result, { ok: false, reason: "host gone.example.com does not resolve (ENOTFOUND)" });
  });
});

describe("request forms (docs/management-api.md, 'How the service calls webhooks') and their signature", () => {
  const webhookData = { userId: "u-1", amount: 5, vip: true, nested: { tier: "gold", tags: ["a"] }, none: null };

  test("registered POST: body {data: webhookData}, JSON, signed over timestamp.body", async () => {
    const request = registeredWebhookRequest(server.url("/true"), "POST", webhookData);
    assert.deepEqual(await callWebhook(request, options()), { ok: true, status: 200 });
    const call = server.calls.at(-1);
    assert.ok(call);
    assert.equal(call.method, "POST");
    assert.equal(call.headers["content-type"], "application/json");
    assert.equal(
      call.body,
      '{"data":{"userId":"u-1","amount":5,"vip":true,"nested":{"tier":"gold","tags":["a"]},"none":null}}',
    );
    const timestamp = call.headers[TIMESTAMP_HEADER] as string;
    assert.match(timestamp, /^\d{10}$/);
    assert.ok(Math.abs(Number(timestamp) - Date.now() / 1000) < 5);
    assert.equal(call.headers[SIGNATURE_HEADER], signWebhook(secret, Number(timestamp), call.body));
    assert.equal(verified(secret, call.headers[SIGNATURE_HEADER] as string, timestamp, call.body), true);
    // Another account's secret, another body or an old timestamp do not verify.
    const otherSecret = webhookSecret(masterKey, "7d1b2a3c-0000-4000-8000-000000000002");
    const header = call.headers[SIGNATURE_HEADER] as string;
    assert.equal(verified(otherSecret, header, timestamp, call.body), false);
    assert.equal(verified(secret, header, timestamp, call.body.replace("u-1", "u-2")), false);
    assert.equal(
      verifyWebhookSignature(secret, header, timestamp, call.body, { nowSeconds: Number(timestamp) + 301 }),
      false,
    );
  });

  test("the timestamp is the service's clock, and a receiver checks its age against its own", async () => {
    const serviceMs = Date.UTC(2031, 0, 1);
    assert.equal((await callWebhook(post("/true"), options({ nowMs: () => serviceMs }))).ok, true);
    const call = server.calls.at(-1);
    assert.ok(call);
    const timestamp = call.headers[TIMESTAMP_HEADER] as string;
    const header = call.headers[SIGNATURE_HEADER] as string;
    assert.equal(Number(timestamp), serviceMs / 1000);
    const at = (nowSeconds: number) => verifyWebhookSignature(secret, header, timestamp, call.body, { nowSeconds });
    assert.equal(at(serviceMs / 1000 + 300), true, "five minutes on, by a receiver's clock that agrees");
    assert.equal(at(Math.floor(Date.now() / 1000)), false, "the wall clock is years from the service's");
  });

  test("credentials in the URL are sent as basic authentication", async () => {
    const url = server.url("/true").replace("http://", "http://hook%40user:p%3Ass@");
    assert.deepEqual(await callWebhook({ method: "POST", url, body: "{}" }, options()), { ok: true, status: 200 });
    const expected = `Basic ${Buffer.from("hook@user:p:ss").toString("base64")}`;
    assert.equal(server.calls.at(-1)?.headers.authorization, expected);
  });

  test("registered POST without webhookData sends {data: {}}", async () => {
    await callWebhook(registeredWebhookRequest(server.url("/true"), "POST", undefined), options());
    assert.equal(server.calls.at(-1)?.body, '{"data":{}}');
  });

  test("registered GET: webhookData as query parameters after the URL's own, objects JSON-encoded; signed over the target", async () => {
    const request = registeredWebhookRequest(server.url("/true?team=7"), "GET", webhookData);
    assert.deepEqual(await callWebhook(request, options()), { ok: true, status: 200 });
    const call = server.calls.at(-1);
    assert.ok(call);
    assert.equal(call.method, "GET");
    assert.equal(call.body, "");
    const query = new URL(call.target, "http://x").searchParams;
    assert.deepEqual(Object.fromEntries(query), {
      team: "7",
      userId: "u-1",
      amount: "5",
      vip: "true",
      nested: '{"tier":"gold","tags":["a"]}',
      none: "null",
    });
    const timestamp = call.headers[TIMESTAMP_HEADER] as string;
    assert.equal(call.headers[SIGNATURE_HEADER], signWebhook(secret, Number(timestamp), call.target));
    assert.equal(verified(secret, call.headers[SIGNATURE_HEADER] as string, timestamp, call.target), true);
  });

  test("WEBHOOK rule: POST {data, userOp} with the operation's numbers as decimal strings", async () => {
    const userOp = {
      sender: "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4",
      nonce: ((1n << 255n) + 7n).toString(),
      initCode: "0x",
      callData: "0xb61d27f6",
      callGasLimit: "108848",
      verificationGasLimit: "57121",
      preVerificationGas: "75388",
      maxFeePerGas: "12591684",
      maxPriorityFeePerGas: "1000000",
    };
    const request = webhookRuleRequest(server.url("/true"), { userId: "u-1" }, userOp);
    assert.deepEqual(await callWebhook(request, options()), { ok: true, status: 200 });
    const call = server.calls.at(-1);
    assert.ok(call);
    assert.deepEqual(JSON.parse(call.body), { data: { userId: "u-1" }, userOp });
    assert.equal(call.body, JSON.stringify({ data: { userId: "u-1" }, userOp }));
    const timestamp = call.headers[TIMESTAMP_HEADER] as string;
    assert.equal(verified(secret, call.headers[SIGNATURE_HEADER] as string, timestamp, call.body), true);
  });

  test("the per-account secret is HMAC-SHA256(master key, accountId) in hex", () => {
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.equal(secret, webhookSecret(masterKey, "7d1b2a3c-0000-4000-8000-000000000001"));
    assert.notEqual(secret, webhookSecret(Buffer.alloc(32, 8), "7d1b2a3c-0000-4000-8000-000000000001"));
  });
});

test("figure: a verified call on loopback", async (t) => {
  const rounds = 200;
  const started = performance.now();
  for (let i = 0; i < rounds; i++)
    assert.deepEqual(await callWebhook(post("/true"), options()), { ok: true, status: 200 });
  t.diagnostic(`one webhook call on loopback: ${((performance.now() - started) / rounds).toFixed(2)} ms`);
});
