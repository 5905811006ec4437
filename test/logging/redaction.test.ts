import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { redactUrl } from "../../src/logging/redaction";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { captureLog } from "../helpers/logCapture";

describe("redactUrl", () => {
  for (const [url, shown] of [
    ["/api/v1/31337/abcDEF_-123", "/api/v1/31337/[redacted]"],
    ["/api/v1/31337/abc?x=1", "/api/v1/31337/[redacted]?x=1"],
    ["/api/v1/31337/abc/more/path", "/api/v1/31337/[redacted]"],
    ["/api/v1/abc", "/api/v1/[redacted]"],
    ["/API//V1/31337/abc", "/API//V1/31337/[redacted]"],
    ["/api/v1/31337", "/api/v1/31337"],
    ["/api/v1/", "/api/v1/"],
    ["/api/v2/public/sdk/webhook?authToken=pm_s3cret&x=1", "/api/v2/public/sdk/webhook?authToken=[redacted]&x=1"],
    [
      "/nope?apikey=k&APIKEY=k&api_key=k&auth-token=t&token=t",
      "/nope?apikey=[redacted]&APIKEY=[redacted]&api_key=[redacted]&auth-token=[redacted]&token=[redacted]",
    ],
    ["/nope?%61uthToken=t", "/nope?%61uthToken=[redacted]"],
    ["/nope?authToken", "/nope?authToken=[redacted]"],
    ["/nope?webhookId=abc&%ZZ=1", "/nope?webhookId=abc&%ZZ=1"],
    ["/api/v2/public/sdk/paymaster-policy/limit/abc", "/api/v2/public/sdk/paymaster-policy/limit/abc"],
  ]) {
    test(`${url} → ${shown}`, () => assert.equal(redactUrl(url as string), shown));
  }
});

describe("what the service logs and answers", () => {
  let t: TestApp;
  let d: Dapp;
  // debug: the RPC route's access lines are logged at debug.
  const log = captureLog("debug");
  before(async () => {
    t = await startTestApp({}, log.logger);
    d = await t.dapp();
  });
  after(() => t.close());

  test("the RPC path's apiKey and a token in the query reach neither the log nor a 404 message", async () => {
    const rpcBody = { jsonrpc: "2.0", id: 1, method: "pm_sponsorUserOperation", params: [] };
    const requests = [
      { method: "POST", url: `/api/v1/31337/${d.apiKey}`, payload: rpcBody },
      { method: "POST", url: `/api/v1/31337/${d.apiKey}?apiKey=${d.apiKey}`, payload: rpcBody },
      { method: "GET", url: `/api/v1/31337/${d.apiKey}` },
      { method: "POST", url: `/api/v1/31337/${d.apiKey}%FF`, payload: rpcBody },
      { method: "GET", url: `${MANAGEMENT_PREFIX}/nope?authToken=${d.token}` },
      { method: "GET", url: `${MANAGEMENT_PREFIX}/webhook?authToken=${d.token}&apiKey=${d.apiKey}` },
      { method: "GET", url: `/elsewhere?authToken=${encodeURIComponent(d.token)}` },
    ] as const;
    for (const request of requests) {
      const response = await t.app.inject({ ...request, headers: { authToken: d.token, apiKey: d.apiKey } });
      assert.ok(response.statusCode < 500, response.body);
      assert.ok(!response.body.includes(d.token), `${request.url}: the answer shows the token: ${response.body}`);
      assert.ok(!response.body.includes(d.apiKey) || response.statusCode === 200, `${request.url}: ${response.body}`);
    }
    const notFound = await t.app.inject({ method: "GET", url: `${MANAGEMENT_PREFIX}/nope?authToken=${d.token}` });
    assert.equal(notFound.json().message, `Route not found: GET ${MANAGEMENT_PREFIX}/nope?authToken=[redacted]`);

    const text = log.text();
    // Every request above was logged (incoming request, request completed), with its URL redacted.
    const urls = log.entries().flatMap((entry) => {
      const req = entry.req as { url?: string } | undefined;
      return req?.url ? [req.url] : [];
    });
    assert.ok(urls.length >= requests.length, text);
    assert.ok(urls.includes("/api/v1/31337/[redacted]"), urls.join("\n"));
    assert.ok(urls.includes(`${MANAGEMENT_PREFIX}/nope?authToken=[redacted]`), urls.join("\n"));
    assert.ok(!text.includes(d.apiKey), `the log shows the apiKey:\n${text}`);
    assert.ok(!text.includes(d.token), `the log shows the authToken:\n${text}`);
    assert.ok(!text.includes(encodeURIComponent(d.token)), `the log shows the encoded authToken:\n${text}`);
  });
});
