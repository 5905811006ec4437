// A management request refused by its schema is an error of the service's one error model (src/errors.ts), an
// ApiError like every other deliberate 4xx, not a plain Error that the error handler has to recognise by its fields.
// Its answer stays the documented one (docs/management-api.md, "Common errors").
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Fastify from "fastify";
import { Type } from "typebox";
import { ApiError, messages, PaymasterError } from "../../src/errors";
import { useManagementSchemas } from "../../src/http/management";
import { startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

test("the error a schema refusal raises is an ApiError of status 400, whose message names the field", async () => {
  const api = useManagementSchemas(Fastify());
  let raised: unknown;
  api.setErrorHandler((error, _request, reply) => {
    raised = error;
    return reply.status(418).send({});
  });
  api.post("/thing", { schema: { body: Type.Object({ name: Type.String() }) } }, async () => ({}));
  const reply = await api.inject({ method: "POST", url: "/thing", payload: { name: 7 } });
  await api.close();

  assert.equal(reply.statusCode, 418, "the route's error handler was reached");
  assert.ok(raised instanceof PaymasterError, `a PaymasterError, not ${String(raised)}`);
  assert.ok(raised instanceof ApiError);
  assert.equal(raised.code, 400);
  assert.equal(raised.httpStatus, 400);
  assert.equal(raised.message, "name must be a string");
});

test("through the app, a schema refusal is still answered with its documented status and message", async () => {
  const dapp = await t.dapp();
  const reply = await t.call("POST", "smart-contract", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: {
      name: "token",
      address: "0x00000000000000000000000000000000000000bb",
      abi: "[]",
      whitelistedMethods: "mint",
    },
  });
  assert.deepEqual(
    [reply.status, reply.body],
    [400, { statusCode: 400, message: messages.whitelistedMethodsMustBeArray }],
  );
});
