import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { inspect } from "node:util";
import { loadConfig, Secret } from "../../src/config";
import { registrationCheck } from "../../src/webhooks/settings";
import { loadWebhookSigningKey } from "../../src/webhooks/signingKey";
import { dnsError } from "../helpers/dns";

const dir = mkdtempSync(path.join(tmpdir(), "paymaster-webhook-"));

test("timeout: 2000 ms by default, WEBHOOK_TIMEOUT_MS from 100 to 30000", () => {
  assert.equal(loadConfig({}).webhooks.timeoutMs, 2000);
  assert.equal(loadConfig({ WEBHOOK_TIMEOUT_MS: "500" }).webhooks.timeoutMs, 500);
  for (const bad of ["99", "30001", "2s", "-1"]) {
    assert.throws(
      () => loadConfig({ WEBHOOK_TIMEOUT_MS: bad }),
      /WEBHOOK_TIMEOUT_MS must be a whole number from 100 to 30000/,
    );
  }
});

test("private webhook addresses: allowed only on a loopback bind outside production, unless configured", () => {
  const allowed = (env: NodeJS.ProcessEnv) => loadConfig(env).webhooks.allowPrivate;
  assert.equal(allowed({}), true, "the embedded default on 127.0.0.1");
  assert.equal(allowed({ HOST: "::1" }), true);
  assert.equal(allowed({ HOST: "localhost" }), true);
  assert.equal(allowed({ HOST: "0.0.0.0" }), false, "a public bind");
  assert.equal(allowed({ NODE_ENV: "production" }), false);
  assert.equal(allowed({ HOST: "0.0.0.0", WEBHOOK_ALLOW_PRIVATE: "true" }), true);
  assert.equal(allowed({ NODE_ENV: "production", WEBHOOK_ALLOW_PRIVATE: "true" }), true);
  assert.equal(allowed({ WEBHOOK_ALLOW_PRIVATE: "false" }), false);
  assert.match(loadConfig({}).webhooks.allowPrivateReason, /HOST 127\.0\.0\.1 is loopback/);
  assert.match(loadConfig({ HOST: "0.0.0.0" }).webhooks.allowPrivateReason, /HOST 0\.0\.0\.0 is not a loopback/);
  assert.match(loadConfig({ NODE_ENV: "production" }).webhooks.allowPrivateReason, /NODE_ENV is production/);
  assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "yes" }), /WEBHOOK_ALLOW_PRIVATE must be one of true, false/);
});

test("signing key: from the environment as a secret, else a key file made only on the embedded default", () => {
  const key = `0x${"ef".repeat(32)}`;
  const fromEnv = loadConfig({ WEBHOOK_SIGNING_KEY: key }).webhooks.signingKey;
  assert.equal(fromEnv.kind, "env");
  assert.doesNotMatch(JSON.stringify(fromEnv) + String(fromEnv) + inspect(fromEnv), /efef/, "prints as [secret]");
  assert.equal(loadWebhookSigningKey(fromEnv).reveal(), key);
  assert.deepEqual(loadConfig({ DATA_DIR: "/tmp/k" }).webhooks.signingKey, {
    kind: "file",
    path: "/tmp/k/webhook.key",
    createIfMissing: true,
  });
  assert.deepEqual(loadConfig({ DATA_DIR: "/tmp/k", DATABASE_URL: "postgres://u@h/db" }).webhooks.signingKey, {
    kind: "file",
    path: "/tmp/k/webhook.key",
    createIfMissing: false,
  });
  assert.deepEqual(loadConfig({ WEBHOOK_SIGNING_KEY_FILE: "/etc/paymaster/webhook.key" }).webhooks.signingKey, {
    kind: "file",
    path: "/etc/paymaster/webhook.key",
    createIfMissing: false,
  });
  assert.throws(
    () => loadConfig({ WEBHOOK_SIGNING_KEY: "secret" }),
    /WEBHOOK_SIGNING_KEY must be 0x followed by 64 hex digits/,
  );
});

test("the key file is made once, owner-only, and read back; refusals name the file, never the key", () => {
  const file = path.join(dir, "webhook.key");
  const made = loadWebhookSigningKey({ kind: "file", path: file, createIfMissing: true });
  assert.match(made.reveal(), /^0x[0-9a-f]{64}$/);
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(loadWebhookSigningKey({ kind: "file", path: file, createIfMissing: false }).reveal(), made.reveal());

  const open = path.join(dir, "open.key");
  writeFileSync(open, `0x${"cd".repeat(32)}`);
  chmodSync(open, 0o644);
  assert.throws(
    () => loadWebhookSigningKey({ kind: "file", path: open, createIfMissing: false }),
    (error: Error) =>
      /webhook signing key file .* must be readable by its owner only/.test(error.message) &&
      !error.message.includes("cdcd"),
  );
  assert.throws(
    () => loadWebhookSigningKey({ kind: "file", path: path.join(dir, "absent.key"), createIfMissing: false }),
    /no webhook signing key: set WEBHOOK_SIGNING_KEY or WEBHOOK_SIGNING_KEY_FILE/,
  );
});

test("registration refuses a name DNS says does not exist, accepts with a warning when DNS cannot tell", async () => {
  const failing: Record<string, string> = {
    "foo.localhost": "ENOTFOUND",
    "localhost.": "ENOTFOUND",
    "metadata.google.internal": "ENOTFOUND",
    "no-address.example.com": "ENODATA",
    "servfail.example.com": "ESERVFAIL",
    "flaky.example.com": "EAI_AGAIN",
    "refused.example.com": "ECONNREFUSED",
    "timeout.example.com": "ETIMEOUT",
  };
  const settings = {
    allowPrivate: false,
    timeoutMs: 500,
    signingKey: new Secret(`0x${"01".repeat(32)}`),
    lookup: async (hostname: string) => {
      if (hostname === "internal.example.com") return [{ address: "10.0.0.5", family: 4 }];
      if (hostname === "public.example.com") return [{ address: "93.184.216.34", family: 4 }];
      if (hostname === "empty.example.com") return [];
      throw dnsError(failing[hostname] ?? "ENOTFOUND", hostname);
    },
  };
  const guard = { allowPrivate: false };
  const check = (host: string, using = settings) => registrationCheck(`https://${host}/hook`, guard, using);
  assert.deepEqual(await check("public.example.com"), { accepted: true });
  assert.deepEqual(await check("internal.example.com"), { refusal: "resolves to 10.0.0.5, a private address" });
  for (const host of ["foo.localhost", "localhost.", "metadata.google.internal", "not-yet.example.com"]) {
    assert.deepEqual(await check(host), { refusal: `host ${host} does not exist (DNS answered ENOTFOUND)` }, host);
  }
  assert.deepEqual(await check("no-address.example.com"), {
    refusal: "host no-address.example.com does not exist (DNS answered ENODATA)",
  });
  assert.deepEqual(await check("empty.example.com"), {
    refusal: "host empty.example.com does not exist (DNS answered no address)",
  });
  for (const [host, code] of [
    ["servfail.example.com", "ESERVFAIL"],
    ["flaky.example.com", "EAI_AGAIN"],
    ["refused.example.com", "ECONNREFUSED"],
    ["timeout.example.com", "ETIMEOUT"],
  ]) {
    assert.deepEqual(
      await check(host as string),
      {
        warning: `webhook host ${host} accepted unchecked: DNS failed (${code}); it is checked again before every call`,
      },
      host,
    );
  }
  const hanging = { ...settings, timeoutMs: 100, lookup: () => new Promise<never>(() => {}) };
  const started = performance.now();
  assert.deepEqual(await check("slow-dns.example.com", hanging), {
    warning:
      "webhook host slow-dns.example.com accepted unchecked: DNS did not answer within 100 ms; it is checked again before every call",
  });
  assert.ok(performance.now() - started < 600);
});
