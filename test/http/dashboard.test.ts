// The dashboard's files as the service serves them: the security headers on every answer (a CSP without inline
// scripts, no framing, no Referer), compression, caching, and no route at all when it is turned off.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { gunzipSync } from "node:zlib";
import { buildDashboard, type DashboardBuild } from "../../scripts/buildDashboard";
import { loadConfig } from "../../src/config";
import { startTestApp, type TestApp } from "../helpers/app";

let folder: string;
let built: DashboardBuild;
let t: TestApp;
before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), "paymaster-dashboard-build-"));
  built = await buildDashboard(folder);
  t = await startTestApp({ dashboardFolder: folder });
});
after(async () => {
  await t.close();
  rmSync(folder, { recursive: true, force: true });
});

const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: "GET", url, headers });

function assertSecurityHeaders(headers: Record<string, unknown>) {
  const csp = String(headers["content-security-policy"]);
  const directives = new Map(
    csp.split(";").map((directive) => {
      const [name, ...values] = directive.trim().split(/\s+/);
      return [name, values.join(" ")] as const;
    }),
  );
  assert.equal(directives.get("default-src"), "'none'");
  assert.equal(directives.get("script-src"), "'self'", "own files only: no inline script, no eval");
  assert.equal(directives.get("connect-src"), "'self'", "the same origin only");
  assert.equal(directives.get("frame-ancestors"), "'none'");
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  assert.equal(headers["x-frame-options"], "DENY");
  assert.equal(headers["referrer-policy"], "no-referrer");
  assert.equal(headers["x-content-type-options"], "nosniff");
}

describe("GET /dashboard", () => {
  test("redirects to /dashboard/, whose page loads only its own hashed script and styles, with no inline script", async () => {
    const redirect = await get("/dashboard");
    assert.equal(redirect.statusCode, 302);
    assert.equal(redirect.headers.location, "/dashboard/");
    assertSecurityHeaders(redirect.headers);

    const page = await get("/dashboard/");
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers["content-type"]), /^text\/html/);
    assert.equal(page.headers["cache-control"], "no-cache");
    assertSecurityHeaders(page.headers);
    const scripts = [...page.body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)];
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]?.[1] ?? "", /src="\.\/main-[A-Z0-9]+\.js"/);
    assert.equal(scripts[0]?.[2], "", "no inline script");
    assert.doesNotMatch(page.body, /\son[a-z]+=/i, "no inline event handler");
  });

  test("every built file is served with the headers, gzipped when asked, cached for good under its hashed name", async () => {
    for (const name of built.files.filter((file) => file !== "index.html")) {
      const plain = await get(`/dashboard/${name}`);
      assert.equal(plain.statusCode, 200, name);
      assertSecurityHeaders(plain.headers);
      assert.equal(plain.rawPayload.toString(), readFileSync(path.join(folder, name), "utf8"));
      assert.match(String(plain.headers["cache-control"]), /immutable/);
      assert.match(String(plain.headers["content-type"]), name.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);

      const gzipped = await get(`/dashboard/${name}`, { "accept-encoding": "gzip, br" });
      assert.equal(gzipped.headers["content-encoding"], "gzip");
      assert.equal(gunzipSync(gzipped.rawPayload).toString(), plain.rawPayload.toString());

      const again = await get(`/dashboard/${name}`, { "if-none-match": String(plain.headers.etag) });
      assert.equal(again.statusCode, 304);
    }
    assert.ok(built.gzipBytes < 200 * 1024, `${built.gzipBytes} bytes gzipped, within the budget`);
  });

  test("an unknown file is a 404 with the headers; the RPC's CORS is untouched", async () => {
    for (const url of ["/dashboard/../../package.json", "/dashboard/%2e%2e/%2e%2e/package.json"]) {
      assert.doesNotMatch((await get(url)).body, /paymaster-service/, `${url} reaches no file outside the build`);
    }
    const unknown = await get("/dashboard/nothing.js");
    assert.equal(unknown.statusCode, 404);
    assertSecurityHeaders(unknown.headers);
    const preflight = await t.app.inject({ method: "OPTIONS", url: "/api/v1/31337/someKey" });
    assert.equal(preflight.headers["access-control-allow-origin"], "*");
    assert.equal(preflight.headers["content-security-policy"], undefined);
  });
});

describe("DASHBOARD=off", () => {
  test("the configuration has no dashboard folder, and the app then has no /dashboard route", async () => {
    assert.equal(loadConfig({ DASHBOARD: "off" }).dashboardFolder, undefined);
    assert.match(loadConfig({}).dashboardFolder ?? "", /dashboard[/\\]dist$/);
    const off = await startTestApp({ dashboardFolder: loadConfig({ DASHBOARD: "off" }).dashboardFolder });
    try {
      for (const url of ["/dashboard", "/dashboard/"]) {
        const reply = await off.app.inject({ method: "GET", url });
        assert.equal(reply.statusCode, 404, url);
        assert.equal(reply.headers["content-security-policy"], undefined);
      }
    } finally {
      await off.close();
    }
  });

  test("a folder never built answers 503 saying how to build it", async () => {
    const empty = mkdtempSync(path.join(tmpdir(), "paymaster-dashboard-empty-"));
    const unbuilt = await startTestApp({ dashboardFolder: empty });
    try {
      const reply = await unbuilt.app.inject({ method: "GET", url: "/dashboard/" });
      assert.equal(reply.statusCode, 503);
      assert.match(reply.json().message, /npm run build:dashboard/);
    } finally {
      await unbuilt.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
