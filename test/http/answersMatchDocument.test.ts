import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { TSchema } from "typebox";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { problemOf } from "../../src/schemas/validate";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV06 } from "../helpers/userOps";

/**
 * The answers the service really sends match what GET /openapi.json says they are: one dApp's whole life through the
 * management API, every answer (successes and refusals) checked against the document's schema for its route and status.
 */
let t: TestApp;
let paths: Record<
  string,
  Record<string, { responses: Record<string, { content?: Record<string, { schema: TSchema }> }> }>
>;
before(async () => {
  t = await startTestApp();
  paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths;
});
after(() => t.close());

let checked = 0;

/** Calls a route and checks its answer against the documented schema of `template` (the path as documented). */
async function answer(
  method: string,
  template: string,
  options: Parameters<TestApp["call"]>[2] & { path?: string } = {},
  status = 200,
) {
  const reply = await t.call(method, options.path ?? template, options);
  assert.equal(reply.status, status, `${method} ${template}: ${JSON.stringify(reply.body)}`);
  const documented = paths[`${MANAGEMENT_PREFIX}/${template}`]?.[method.toLowerCase()]?.responses[String(status)];
  const schema = documented?.content?.["application/json"]?.schema;
  assert.ok(schema, `${method} ${template} documents its ${status}`);
  assert.equal(problemOf(schema, reply.body, "answer"), undefined, `${method} ${template} ${status}`);
  checked++;
  return reply.body.data;
}

const ABI = [
  {
    type: "function",
    name: "mint",
    inputs: [{ name: "to", type: "address" }],
    outputs: [],
    stateMutability: "nonpayable",
  },
];

test("every answer of a dApp's life matches the document", async () => {
  const d: Dapp = await t.dapp();
  const auth = { token: d.token, apiKey: d.apiKey };
  const contract = `0x${"ab".repeat(20)}`;

  await answer("GET", "paymasterParameters", { token: d.token });
  await answer("GET", "paymaster", { token: d.token });
  await answer("POST", "paymaster", {
    token: d.token,
    body: { name: "second", type: "HYBRID", chainId: d.chainId, version: "1" },
  });
  await answer("POST", "paymasterParameters", { token: d.token, body: { name: "x" } }, 400);
  await answer("GET", "paymasterParameters", {}, 401);
  await linkFundingWallet(t, d);
  await answer("GET", "funding-message/{paymasterId}", { ...auth, path: `funding-message/${d.paymasterId}` });
  await answer("GET", "funding-message/{paymasterId}", { ...auth, path: "funding-message/other" }, 404);
  await answer("GET", "funding-balance/{paymasterId}", { ...auth, path: `funding-balance/${d.paymasterId}` });
  await answer("GET", "funding-balance/{paymasterId}", { ...auth, path: "funding-balance/other" }, 404);
  await answer(
    "PATCH",
    "paymasterParameters",
    { ...auth, body: { paymasterId: d.paymasterId, type: "paymasterFundingId", signature: "0x00", address: contract } },
    400,
  );

  await answer("POST", "smart-contract", {
    ...auth,
    body: { name: "nft", address: contract, abi: JSON.stringify(ABI) },
  });
  await answer("GET", "smart-contract", auth);
  await answer("PATCH", "smart-contract", { ...auth, body: { address: contract, whitelistedMethods: [] } });
  await answer("PATCH", "smart-contract", { ...auth, body: { address: contract, whitelistedMethods: "mint" } }, 400);

  const limit = await answer("POST", "paymaster-policy", {
    ...auth,
    body: {
      name: "cap",
      policyType: "PAYMASTER_SA_LIMIT",
      policyData: { type: "SMART_ACCOUNT", cycleDuration: "1 day", thresholdType: "NATIVE_ASSET", threshold: 0.5 },
    },
  });
  await answer("POST", "paymaster-policy", {
    ...auth,
    body: { name: "deploy", policyType: "WALLET_DEPLOYMENT", policyData: {} },
  });
  await answer("GET", "paymaster-policy", auth);
  const policyId = (limit as { _id: string })._id;
  await answer("PATCH", "paymaster-policy/limit/{policyId}", {
    ...auth,
    path: `paymaster-policy/limit/${policyId}`,
    body: { threshold: 2 },
  });
  await answer("PATCH", "paymaster-policy/deactivate/{policyId}", {
    ...auth,
    path: `paymaster-policy/deactivate/${policyId}`,
  });
  await answer("PATCH", "paymaster-policy/activate/{policyId}", { ...auth, path: "paymaster-policy/activate/x" }, 404);
  await answer("GET", "paymaster-policy/usage", auth);
  const list = await answer("POST", "paymaster-policy", {
    ...auth,
    body: { name: "vips", policyType: "SENDER_ALLOWLIST", policyData: { addresses: [contract] } },
  });
  const listId = (list as { _id: string })._id;
  await answer("PATCH", "paymaster-policy/{policyId}", {
    ...auth,
    path: `paymaster-policy/${listId}`,
    body: { name: "friends", policyData: { addresses: [] } },
  });
  await answer(
    "PATCH",
    "paymaster-policy/{policyId}",
    { ...auth, path: `paymaster-policy/${listId}`, body: { policyData: { addresses: ["0x1"] } } },
    400,
  );
  await answer(
    "PATCH",
    "paymaster-policy/{policyId}",
    { ...auth, path: "paymaster-policy/x", body: { name: "y" } },
    404,
  );
  // A record in the ledger, sponsored or refused: every answer is one.
  const op = userOpV06(`0x${"12".repeat(20)}`, 0);
  assert.equal((await rpc(t, d, "pm_sponsorUserOperation", [op, { mode: "SPONSORED" }])).status, 200);
  assert.equal(((await answer("GET", "sponsorships", auth)) as unknown[]).length, 1);
  await answer("GET", "sponsorships", { ...auth, query: { status: "mined", limit: "10" } });
  await answer("GET", "sponsorships", { ...auth, query: { status: "done" } }, 400);
  await answer("GET", "sponsorships/stats", { ...auth, query: { bucket: "hour" } });
  await answer("GET", "sponsorships/stats", { ...auth, query: { from: "5", to: "1" } }, 400);
  await answer("GET", "sponsorships/stats", {}, 401);

  const webhook = await answer("POST", "webhook", {
    ...auth,
    body: { webhookUrl: "http://127.0.0.1:9/verify", requestType: "POST" },
  });
  const webhookId = (webhook as { webhookId: string }).webhookId;
  await answer("GET", "webhook", { ...auth, query: { webhookId } });
  await answer("PATCH", "webhook", { ...auth, body: { webhookId, active: false } });
  await answer("PATCH", "webhook", { ...auth, body: { webhookId } }, 400);
  await answer("GET", "webhook-secret", { token: d.token });
  await answer("DELETE", "webhook", { ...auth, body: { webhookId } });
  await answer("DELETE", "webhook", { ...auth, body: { webhookId } }, 404);
  await answer("DELETE", "smart-contract", { ...auth, body: { address: contract } });
  assert.equal(checked, 39, "every call above was checked");
});
