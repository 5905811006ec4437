import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { encodeFunctionData, type Hex, parseAbi } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { Secret } from "../../src/config";
import { listSponsorships } from "../../src/storage/sponsorships";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../../src/webhooks/signature";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, fundedDapp, rpc } from "../helpers/dappSetup";
import { MIXED_FORM_GAS, userOpV06 } from "../helpers/userOps";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)", "function burn(uint256 amount)"]);
const executeAbi = parseAbi(["function execute_ncC(address dest, uint256 value, bytes func)"]);
const call = (functionName: "mint" | "burn") =>
  encodeFunctionData({
    abi: executeAbi,
    functionName: "execute_ncC",
    args: [TARGET, 0n, encodeFunctionData({ abi: targetAbi, functionName, args: [5n] })],
  });

const TIMEOUT_MS = 400;
let t: TestApp;
let hooks: WebhookServer;
let nonce = 0;

before(async () => {
  hooks = await startWebhookServer();
  t = await startTestApp({
    webhooks: { allowPrivate: true, timeoutMs: TIMEOUT_MS, signingKey: new Secret(generatePrivateKey()) },
  });
});
after(async () => {
  await t.close();
  await hooks.close();
});

/** A dApp that passes rules 1 to 3 for `mint` on TARGET. */
async function freshDapp(): Promise<Dapp> {
  return fundedDapp(t, { contract: { address: TARGET, abi: targetAbi, methods: ["mint"] } });
}

async function registerWebhook(dapp: Dapp, path: string, requestType: "GET" | "POST" = "POST"): Promise<string> {
  const reply = await t.call("POST", "webhook", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { webhookUrl: hooks.url(path), requestType },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return (reply.body.data as { webhookId: string }).webhookId;
}

const userOp = (overrides: Record<string, unknown> = {}) =>
  userOpV06("0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4", ++nonce, {
    callData: call("mint"),
    ...MIXED_FORM_GAS,
    signature: "0x",
    ...overrides,
  });

async function sponsor(dapp: Dapp, op = userOp(), webhookData?: Record<string, unknown>) {
  const mode = { mode: "SPONSORED", calculateGasLimits: false, sponsorshipInfo: { webhookData } };
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [op, mode]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as { paymasterAndData: Hex; reason?: string };
}

const origin = () => hooks.base;

describe("registered webhooks", () => {
  test("POST answering true: sponsored; the body is {data: webhookData}, signed with the account's secret", async () => {
    const dapp = await freshDapp();
    await registerWebhook(dapp, "/true");
    const before = hooks.calls.length;
    const result = await sponsor(dapp, userOp(), { userId: "u-42", plan: { tier: "gold" } });
    assert.equal(result.reason, undefined);
    assert.notEqual(result.paymasterAndData, "0x");
    const received = hooks.calls.slice(before);
    assert.equal(received.length, 1);
    const [hook] = received;
    assert.ok(hook);
    assert.equal(hook.method, "POST");
    assert.equal(hook.body, '{"data":{"userId":"u-42","plan":{"tier":"gold"}}}');

    const secretReply = await t.call("GET", "webhook-secret", { token: dapp.token });
    assert.equal(secretReply.status, 200);
    assert.equal(secretReply.body.message, "Webhook secret fetched");
    const { webhookSecret } = secretReply.body.data as { webhookSecret: string };
    const valid = verifyWebhookSignature(
      webhookSecret,
      hook.headers[SIGNATURE_HEADER] as string,
      hook.headers[TIMESTAMP_HEADER] as string,
      hook.body,
      { nowSeconds: Math.floor(t.ctx.now() / 1000) },
    );
    assert.equal(valid, true, "the receiver can check the request came from this service");
  });

  test("GET answering false: refused with the webhook named; webhookData went in the query", async () => {
    const dapp = await freshDapp();
    const id = await registerWebhook(dapp, "/false", "GET");
    const before = hooks.calls.length;
    const result = await sponsor(dapp, userOp(), { userId: "u-7", amount: 3 });
    assert.equal(result.paymasterAndData, "0x");
    assert.equal(result.reason, `Webhook ${id} (${origin()}) refused: arePoliciesVerified false`);
    const [hook] = hooks.calls.slice(before);
    assert.equal(hook?.method, "GET");
    assert.equal(hook?.target, "/false?userId=u-7&amount=3");
  });

  for (const [path, problem] of [
    ["/slow", `timed out after ${TIMEOUT_MS} ms`],
    ["/slow-body", `timed out after ${TIMEOUT_MS} ms`],
    ["/status-500", "status 500"],
    ["/invalid-json", "invalid JSON"],
    ["/missing", "response has no boolean arePoliciesVerified"],
    ["/redirect", "redirect not followed (status 302)"],
    ["/oversized", "response larger than 16384 bytes"],
    ["/oversized-stream", "response larger than 16384 bytes"],
    ["/hang-up", "connection reset"],
  ]) {
    test(`${path}: refused with "${problem}", answered within the timeout`, async () => {
      const dapp = await freshDapp();
      const id = await registerWebhook(dapp, path as string);
      const trueCalls = hooks.callsTo("/true").length;
      const started = performance.now();
      const result = await sponsor(dapp);
      assert.ok(performance.now() - started < TIMEOUT_MS + 500, "never hangs past the timeout");
      assert.equal(result.paymasterAndData, "0x");
      assert.equal(result.reason, `Webhook ${id} (${origin()}) refused: ${problem}`);
      assert.equal(hooks.callsTo("/true").length, trueCalls, "no redirect was followed");
    });
  }

  test("the old spelling arePoliciesVerifed is accepted", async () => {
    const dapp = await freshDapp();
    await registerWebhook(dapp, "/old-spelling");
    assert.equal((await sponsor(dapp)).reason, undefined);
  });

  test("a deactivated webhook is not called; reactivated, it is again", async () => {
    const dapp = await freshDapp();
    const id = await registerWebhook(dapp, "/false");
    const auth = { token: dapp.token, apiKey: dapp.apiKey };
    await t.call("PATCH", "webhook", { ...auth, body: { webhookId: id, active: false } });
    const before = hooks.callsTo("/false").length;
    assert.equal((await sponsor(dapp)).reason, undefined);
    assert.equal(hooks.callsTo("/false").length, before);
    await t.call("PATCH", "webhook", { ...auth, body: { webhookId: id, active: true } });
    assert.match((await sponsor(dapp)).reason ?? "", /arePoliciesVerified false/);
    assert.equal(hooks.callsTo("/false").length, before + 1);
  });

  test("every webhook is called, at once; each refusal is named", async () => {
    const dapp = await freshDapp();
    await registerWebhook(dapp, "/true");
    const slow = await registerWebhook(dapp, "/slow");
    const no = await registerWebhook(dapp, "/false", "GET");
    const started = performance.now();
    const result = await sponsor(dapp);
    const elapsed = performance.now() - started;
    assert.equal(
      result.reason,
      `Webhook ${slow} (${origin()}) refused: timed out after ${TIMEOUT_MS} ms; ` +
        `Webhook ${no} (${origin()}) refused: arePoliciesVerified false`,
    );
    assert.ok(elapsed < 2 * TIMEOUT_MS, `in parallel, not one after the other (${elapsed.toFixed(0)} ms)`);
  });
});

describe("WEBHOOK rules", () => {
  test("true: sponsored; the body is {data, userOp} with the operation's numbers as decimal strings", async () => {
    const dapp = await freshDapp();
    await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/true") }, "verify");
    const before = hooks.calls.length;
    const op = userOp({ nonce: "0x1000000000000000000000000000000000000000000000000000000000000007" });
    const result = await sponsor(dapp, op, { session: "s-1" });
    assert.equal(result.reason, undefined);
    const [hook] = hooks.calls.slice(before);
    assert.ok(hook);
    assert.deepEqual(JSON.parse(hook.body), {
      data: { session: "s-1" },
      userOp: {
        sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4",
        nonce: (2n ** 252n + 7n).toString(),
        initCode: "0x",
        callData: call("mint"),
        callGasLimit: "108848",
        verificationGasLimit: "57121",
        preVerificationGas: "75388",
        maxFeePerGas: "12591684",
        maxPriorityFeePerGas: "1000000",
      },
    });
  });

  test("false: refused, naming the rule; paused, it is not called", async () => {
    const dapp = await freshDapp();
    const policyId = await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/false?key=hidden") }, "kyc");
    const result = await sponsor(dapp);
    assert.equal(result.reason, `Webhook rule "kyc" (${origin()}) refused: arePoliciesVerified false`);
    assert.doesNotMatch(result.reason ?? "", /hidden/, "the URL's path and query stay private to the dApp");
    const auth = { token: dapp.token, apiKey: dapp.apiKey };
    await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, auth);
    const before = hooks.callsTo("/false").length;
    assert.equal((await sponsor(dapp)).reason, undefined);
    assert.equal(hooks.callsTo("/false").length, before);
  });
});

describe("evaluation order and the record", () => {
  test("a cheap rule that refuses stops the evaluation before any webhook is called", async () => {
    const dapp = await freshDapp();
    await registerWebhook(dapp, "/true");
    await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/true") }, "rule");
    const before = hooks.calls.length;
    const result = await sponsor(dapp, userOp({ callData: call("burn") }));
    assert.match(result.reason ?? "", /^Smart contract data not found/);
    const deployment = await sponsor(dapp, userOp({ initCode: `${TARGET}00` }));
    assert.match(deployment.reason ?? "", /WALLET_DEPLOYMENT/);
    assert.equal(hooks.calls.length, before, "no webhook was called");
  });

  test("the sponsorship record keeps every rule's outcome, the webhook's reason included", async () => {
    const dapp = await freshDapp();
    const id = await registerWebhook(dapp, "/status-500");
    await sponsor(dapp);
    const [record] = await listSponsorships(t.db, dapp.paymasterId);
    assert.ok(record);
    assert.equal(record.sponsored, false);
    assert.deepEqual(record.rule_outcomes, [
      { rule: "fundingAndRules", passed: true },
      { rule: "walletDeployment", passed: true },
      { rule: "contractWhitelist", passed: true },
      { rule: "maxCostPerOp", passed: true },
      { rule: "maxGasPrice", passed: true },
      { rule: "timeWindow", passed: true },
      { rule: "senderLists", passed: true },
      { rule: "spendingLimits", passed: true },
      // The test chains have no RPC: the deposit is not checked, and the record says so.
      { rule: "deposit", passed: true, reason: "no RPC configured: deposit not checked" },
      { rule: "webhooks", passed: false, reason: `Webhook ${id} (${origin()}) refused: status 500` },
    ]);
  });

  test("a webhook refusal gives back what the spending limit reserved", async () => {
    const dapp = await freshDapp();
    await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", {
      type: "PAYMASTER",
      cycleDuration: { value: 1, unit: "day" },
      threshold: 1,
      thresholdType: "COUNT",
    });
    const id = await registerWebhook(dapp, "/false");
    assert.match((await sponsor(dapp)).reason ?? "", /arePoliciesVerified false/);
    assert.match((await sponsor(dapp)).reason ?? "", /arePoliciesVerified false/);
    await t.call("PATCH", "webhook", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { webhookId: id, active: false },
    });
    assert.equal((await sponsor(dapp)).reason, undefined, "the limit of 1 is still free");
    assert.match((await sponsor(dapp)).reason ?? "", /^Spending limit/);
  });
});

describe("webhook-secret endpoint", () => {
  test("needs the account's token; one secret per account, the same for every paymaster", async () => {
    assert.deepEqual((await t.call("GET", "webhook-secret")).body, {
      statusCode: 401,
      message: "Auth token is required in the headers",
    });
    assert.equal((await t.call("GET", "webhook-secret", { token: "wrong" })).status, 401);
    const a = await t.dapp();
    const b = await t.dapp();
    const secretOf = async (token: string) => {
      const reply = await t.app.inject({
        method: "GET",
        url: "/api/v2/public/sdk/webhook-secret",
        headers: { authToken: token },
      });
      assert.equal(reply.headers["cache-control"], "no-store");
      return (reply.json().data as { webhookSecret: string }).webhookSecret;
    };
    const first = await secretOf(a.token);
    assert.match(first, /^[0-9a-f]{64}$/);
    assert.equal(await secretOf(a.token), first);
    assert.notEqual(await secretOf(b.token), first);
  });
});
