import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { managementRoutesOf } from "../../src/http/managementDocs";
import { startTestApp, type TestApp } from "../helpers/app";

/**
 * GET /openapi.json describes the management API from the schemas that validate it: a valid OpenAPI document, with
 * exactly the routes the app serves; GET /docs renders it from assets served by the service itself.
 */
let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

type Operation = {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema?: unknown; examples?: unknown; example?: unknown }> }>;
};
type Document = {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
};

async function openapi(): Promise<Document> {
  const reply = await t.app.inject({ method: "GET", url: "/openapi.json" });
  assert.equal(reply.statusCode, 200);
  return reply.json() as Document;
}

/** Fastify's `:param` as OpenAPI's `{param}`. */
const openapiPath = (url: string) => url.replace(/:([A-Za-z]+)/g, "{$1}");

describe("GET /openapi.json", () => {
  test("is a valid OpenAPI 3.1 document, served without credentials", async () => {
    const document = await openapi();
    assert.equal(document.openapi, "3.1.0");
    const result = await new Validator().validate(document as unknown as Parameters<Validator["validate"]>[0]);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
  });

  test("documents every management route the app serves, and nothing else", async () => {
    const document = await openapi();
    const served = managementRoutesOf(t.app).map((route) => `${route.method} ${openapiPath(route.url)}`);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // The alias `paymaster` and the interface's `paymasterParameters`, the rules and their usage, webhooks, funding.
    assert.ok(served.length >= 20, `only ${served.length} management routes were seen`);
    assert.deepEqual([...documented].sort(), [...served].sort());
    for (const route of [
      "GET /paymasterParameters",
      "POST /paymaster",
      "PATCH /paymaster",
      "GET /paymaster-policy/usage",
      "PATCH /paymaster-policy/limit/{policyId}",
      "PATCH /paymaster-policy/{policyId}",
      "GET /webhook-secret",
      "GET /funding-message/{paymasterId}",
      "GET /funding-balance/{paymasterId}",
      "GET /sponsorships",
      "GET /sponsorships/stats",
    ]) {
      const [method, path] = route.split(" ") as [string, string];
      assert.ok(documented.includes(`${method} ${MANAGEMENT_PREFIX}${path}`), `${route} is documented`);
    }
    assert.ok(!documented.some((entry) => entry.includes("/rpc/") || entry.includes("/internal/")));
  });

  test("names the credential headers as security schemes, and each operation says which it needs", async () => {
    const document = await openapi();
    assert.deepEqual(document.components.securitySchemes.authToken, {
      type: "apiKey",
      in: "header",
      name: "authToken",
      description: "The account's token (created with `npm run account`).",
    });
    assert.equal(document.components.securitySchemes.apiKey?.name, "apiKey");
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const schemes = Object.keys(operation.security?.[0] ?? {});
        assert.ok(schemes.includes("authToken"), `${method} ${path} needs the token`);
        assert.ok(operation.responses["200"], `${method} ${path} documents its answer`);
        assert.ok(operation.responses["401"], `${method} ${path} documents its 401`);
      }
    }
    const paymasters = document.paths[`${MANAGEMENT_PREFIX}/paymaster`] as Record<string, Operation>;
    assert.deepEqual(Object.keys(paymasters.get?.security?.[0] ?? {}), ["authToken"]);
    const contracts = document.paths[`${MANAGEMENT_PREFIX}/smart-contract`] as Record<string, Operation>;
    assert.deepEqual(Object.keys(contracts.post?.security?.[0] ?? {}).sort(), ["apiKey", "authToken"]);
  });

  test("documents the request bodies and the 4xx answers with the interface's messages", async () => {
    const document = await openapi();
    const text = JSON.stringify(document);
    for (const message of [
      "paymaster_name_exists",
      "Chain ID not supported",
      "whitelistedMethods must be an array",
      "active must be a boolean value",
      "webhookId must be a string",
      "Auth token and API key is required in the headers",
      "Auth token is required in the headers",
      "Policy not found",
    ]) {
      assert.ok(text.includes(JSON.stringify(message)), `the document quotes "${message}"`);
    }
    const create = (document.paths[`${MANAGEMENT_PREFIX}/paymasterParameters`] as Record<string, Operation>).post;
    assert.ok(create?.requestBody, "the create documents its body");
    assert.ok(create?.responses["400"]?.content?.["application/json"], "the create documents its 400 body");
  });
});

describe("GET /docs", () => {
  test("is an HTML page whose scripts and styles the service serves itself", async () => {
    const page = await t.app.inject({ method: "GET", url: "/docs" });
    const html =
      page.statusCode === 302 ? await t.app.inject({ method: "GET", url: String(page.headers.location) }) : page;
    assert.equal(html.statusCode, 200);
    assert.match(String(html.headers["content-type"]), /text\/html/);
    const assets = [...html.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] as string);
    assert.ok(
      assets.some((asset) => asset.endsWith(".js")),
      "the page loads scripts",
    );
    for (const asset of assets) {
      assert.ok(!/^(https?:)?\/\//.test(asset), `${asset} is served by the service, not a CDN`);
      const url = asset.startsWith("/") ? asset : `/docs/${asset.replace(/^\.\//, "")}`;
      const reply = await t.app.inject({ method: "GET", url });
      assert.equal(reply.statusCode, 200, `${url} loads`);
    }
  });
});
