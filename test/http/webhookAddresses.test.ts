import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { generatePrivateKey } from "viem/accounts";
import { Secret } from "../../src/config";
import type { Lookup } from "../../src/webhooks/addressGuard";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { dnsError } from "../helpers/dns";
import { captureLog } from "../helpers/logCapture";

/**
 * A DNS where `internal.example.com` is a private address, `flaky.example.com` gets no answer from a DNS server
 * (EAI_AGAIN, as when DNS is unreachable) and other unknown names do not exist (ENOTFOUND).
 */
const lookup: Lookup = async (hostname) => {
  if (hostname === "internal.example.com") return [{ address: "10.0.0.5", family: 4 }];
  if (hostname === "public.example.com") return [{ address: "93.184.216.34", family: 4 }];
  if (hostname === "localhost") return [{ address: "127.0.0.1", family: 4 }];
  if (hostname === "flaky.example.com") throw dnsError("EAI_AGAIN", hostname);
  throw dnsError("ENOTFOUND", hostname);
};
const settings = (allowPrivate: boolean) => ({
  allowPrivate,
  timeoutMs: 2000,
  signingKey: new Secret(generatePrivateKey()),
  lookup,
});

function registrar(t: TestApp, dapp: Dapp) {
  const auth = { token: dapp.token, apiKey: dapp.apiKey };
  return {
    webhook: (webhookUrl: string) => t.call("POST", "webhook", { ...auth, body: { webhookUrl, requestType: "POST" } }),
    rule: (url: string) =>
      t.call("POST", "paymaster-policy", {
        ...auth,
        body: { name: `rule-${Math.random()}`, policyType: "WEBHOOK", policyData: { url } },
      }),
    count: async () => {
      const hooks = await t.call("GET", "webhook", auth);
      const rules = await t.call("GET", "paymaster-policy", auth);
      return (hooks.body.data as unknown[]).length + (rules.body.data as unknown[]).length;
    },
  };
}

describe("production settings: only public webhook addresses", () => {
  let t: TestApp;
  let dapp: Dapp;
  const log = captureLog("warn");
  before(async () => {
    t = await startTestApp({ webhooks: settings(false) }, log.logger);
    dapp = await t.dapp();
  });
  after(() => t.close());

  for (const [url, reason] of [
    ["http://127.0.0.1:9000/hook", "is 127.0.0.1, a loopback address"],
    ["http://[::1]:9000/hook", "is ::1, a loopback address"],
    ["http://localhost:9000/hook", "resolves to 127.0.0.1, a loopback address"],
    ["https://10.0.0.5/hook", "is 10.0.0.5, a private address"],
    ["https://internal.example.com/hook", "resolves to 10.0.0.5, a private address"],
    ["http://169.254.169.254/latest/meta-data", "is 169.254.169.254, a link-local address"],
    ["http://[fd00::1]/", "is fd00::1, a unique-local address"],
    ["http://0.0.0.0:3000/", "is 0.0.0.0, an unspecified address"],
    ["http://2130706433/", "is 127.0.0.1, a loopback address"],
  ]) {
    test(`${url}: refused at registration, as a webhook and as a WEBHOOK rule`, async () => {
      const { webhook, rule, count } = registrar(t, dapp);
      assert.deepEqual((await webhook(url as string)).body, { statusCode: 400, message: `webhookUrl ${reason}` });
      assert.deepEqual((await rule(url as string)).body, { statusCode: 400, message: `policyData.url ${reason}` });
      assert.equal(await count(), 0, "nothing was stored");
    });
  }

  for (const host of ["localhost.", "foo.localhost", "metadata.google.internal", "not-yet.example.com"]) {
    test(`${host}: DNS says it does not exist, so it is refused at registration`, async () => {
      const { webhook, rule, count } = registrar(t, dapp);
      const reason = `host ${host} does not exist (DNS answered ENOTFOUND)`;
      const url = `https://${host}/hook`;
      assert.deepEqual((await webhook(url)).body, { statusCode: 400, message: `webhookUrl ${reason}` });
      assert.deepEqual((await rule(url)).body, { statusCode: 400, message: `policyData.url ${reason}` });
      assert.equal(await count(), 0, "nothing was stored");
    });
  }

  test("public addresses are accepted; a name DNS cannot answer for is accepted with a warning", async () => {
    const { webhook, rule } = registrar(t, dapp);
    for (const url of ["https://public.example.com/hook", "https://93.184.216.34/"]) {
      assert.equal((await webhook(url)).status, 200, url);
      assert.equal((await rule(url)).status, 200, url);
    }
    const warnings = () => log.entries().filter((entry) => entry.level === 40);
    assert.equal(warnings().length, 0);
    assert.equal((await webhook("https://flaky.example.com/hook?key=dapp-secret")).status, 200);
    assert.equal((await rule("https://flaky.example.com/rule")).status, 200);
    assert.deepEqual(
      warnings().map((entry) => [entry.field, entry.msg]),
      ["webhookUrl", "policyData.url"].map((field) => [
        field,
        "webhook host flaky.example.com accepted unchecked: DNS failed (EAI_AGAIN); it is checked again before every call",
      ]),
    );
    assert.doesNotMatch(log.text(), /dapp-secret/, "the warning names the host, not the URL");
  });

  test("syntax is still checked first", async () => {
    const { webhook } = registrar(t, dapp);
    assert.deepEqual((await webhook("ftp://10.0.0.5/")).body, {
      statusCode: 400,
      message: "webhookUrl must be an http or https URL",
    });
  });
});

describe("development settings: loopback allowed, but never the service itself", () => {
  let t: TestApp;
  let dapp: Dapp;
  let port: number;
  before(async () => {
    t = await startTestApp({ webhooks: settings(true) });
    dapp = await t.dapp();
    await t.app.listen({ port: 0, host: "127.0.0.1" });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  test("loopback and private addresses on other ports are accepted", async () => {
    const { webhook, rule } = registrar(t, dapp);
    for (const url of [`http://127.0.0.1:${port + 1}/hook`, "http://localhost:9000/", "http://10.0.0.5/"]) {
      assert.equal((await webhook(url)).status, 200, url);
      assert.equal((await rule(url)).status, 200, url);
    }
  });

  test("the service's own address and port is refused", async () => {
    const { webhook, rule } = registrar(t, dapp);
    for (const [url, reason] of [
      [`http://127.0.0.1:${port}/api/v2/public/sdk/webhook`, `is 127.0.0.1 port ${port}, this service itself`],
      [`http://localhost:${port}/`, `resolves to 127.0.0.1 port ${port}, this service itself`],
      [`http://[::ffff:127.0.0.1]:${port}/`, `is ::ffff:7f00:1 port ${port}, this service itself`],
    ]) {
      assert.deepEqual((await webhook(url as string)).body, { statusCode: 400, message: `webhookUrl ${reason}` });
      assert.deepEqual((await rule(url as string)).body, { statusCode: 400, message: `policyData.url ${reason}` });
    }
  });

  test("unspecified, multicast and reserved addresses are refused even in development", async () => {
    const { webhook } = registrar(t, dapp);
    for (const url of ["http://0.0.0.0:9000/", "http://224.0.0.1/", "http://240.0.0.1/", "http://[::]:9000/"]) {
      assert.equal((await webhook(url)).status, 400, url);
    }
  });
});
