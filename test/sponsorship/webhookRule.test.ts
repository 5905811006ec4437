// The webhook rule against a real HTTP server on 127.0.0.1: who is called and with what, and the exact refusal. How
// one call reads its answer (timeouts, redirects, sizes) is test/webhooks/call.test.ts's business; here, the rule.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "viem";
import { generatePrivateKey } from "viem/accounts";
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import { Secret } from "../../src/config";
import type { PartialUserOperation } from "../../src/sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../../src/sponsorship/partialUserOperationV07";
import type { RuleInput } from "../../src/sponsorship/rule";
import { webhookRule } from "../../src/sponsorship/rules/webhooks";
import type { PolicyOf, ReadablePolicy } from "../../src/storage/policies";
import type { Webhook } from "../../src/storage/webhooks";
import { accountWebhookSecret, type WebhookSettings } from "../../src/webhooks/settings";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyWebhookSignature } from "../../src/webhooks/signature";
import { startWebhookServer, type WebhookServer } from "../helpers/webhookServer";

const SETTINGS: WebhookSettings = {
  allowPrivate: true,
  timeoutMs: 2_000,
  signingKey: new Secret(generatePrivateKey()),
};
const ACCOUNT = "8b5c2a0e-0000-4000-8000-000000000001";
const SECRET = accountWebhookSecret(SETTINGS, ACCOUNT);

const OP: PartialUserOperation = {
  sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as Address,
  nonce: 0x10n,
  initCode: "0x",
  callData: "0xb61d27f6",
  callGasLimit: 100_000n,
  verificationGasLimit: 0x20000n,
  preVerificationGas: 21_000n,
  maxFeePerGas: 2_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
};

let server: WebhookServer;
before(async () => {
  server = await startWebhookServer();
});
after(() => server.close());

let ids = 0;
const registered = (path: string, requestType: "GET" | "POST" = "POST"): Webhook => ({
  id: `webhook-${++ids}`,
  paymasterId: "pm",
  url: server.url(path),
  requestType,
  active: true,
});
const webhookPolicy = (name: string, url: string): PolicyOf<"WEBHOOK"> => ({
  id: `policy-${name}`,
  paymasterId: "pm",
  createdBy: ACCOUNT,
  name,
  policyType: "WEBHOOK",
  active: true,
  policyData: { url },
  cycleStartMs: null,
});

function input(webhooks: Webhook[], policies: ReadablePolicy[], webhookData?: Record<string, unknown>): RuleInput {
  return {
    setup: {
      paymasterId: "pm",
      accountId: ACCOUNT,
      chainId: 31337,
      fundingAddress: "0x00000000000000000000000000000000000f0f0f",
      policies,
      contracts: new Map(),
      webhooks,
    },
    userOp: OP,
    version: ENTRY_POINT_VERSIONS["0.6"],
    ...(webhookData ? { webhookData } : {}),
    nowMs: Date.now(),
    validUntil: Math.floor(Date.now() / 1000) + 300,
  };
}

const rule = webhookRule(SETTINGS, () => [], Date.now);

/** Evaluates and returns the outcome with the calls the server received meanwhile. */
async function evaluate(ruleInput: RuleInput, webhookRuleUnderTest = rule) {
  const before = server.calls.length;
  const outcome = await webhookRuleUnderTest.evaluate(ruleInput);
  return { outcome, calls: server.calls.slice(before) };
}

describe("webhookJson (v0.6): the operation a WEBHOOK rule receives", () => {
  const cases: { name: string; input: PartialUserOperation; expected: Record<string, string> }[] = [
    {
      name: "every field, numbers as decimal strings",
      input: OP,
      expected: {
        sender: OP.sender,
        nonce: "16",
        initCode: "0x",
        callData: "0xb61d27f6",
        callGasLimit: "100000",
        verificationGasLimit: "131072",
        preVerificationGas: "21000",
        maxFeePerGas: "2000000000",
        maxPriorityFeePerGas: "1000000000",
      },
    },
    {
      name: "gas fields not sent yet are left out",
      input: { sender: OP.sender, nonce: 0n, initCode: "0x12", callData: "0x" },
      expected: { sender: OP.sender, nonce: "0", initCode: "0x12", callData: "0x" },
    },
    {
      name: "a zero gas field is kept",
      input: { sender: OP.sender, nonce: 2n ** 200n, initCode: "0x", callData: "0x", maxFeePerGas: 0n },
      expected: {
        sender: OP.sender,
        nonce: (2n ** 200n).toString(),
        initCode: "0x",
        callData: "0x",
        maxFeePerGas: "0",
      },
    },
  ];
  for (const { name, input: op, expected } of cases)
    test(name, () => assert.deepEqual(ENTRY_POINT_VERSIONS["0.6"].webhookJson(op), expected));
});

describe("who is called, and the outcome", () => {
  test("no webhook and no WEBHOOK rule: passes, nothing called", async () => {
    const { outcome, calls } = await evaluate(input([], []));
    assert.deepEqual(outcome, { rule: "webhooks", passed: true });
    assert.deepEqual(calls, []);
  });

  const cases: {
    name: string;
    webhooks: [path: string, type?: "GET" | "POST"][];
    policies: [name: string, path: string][];
    /** Refusals in order; `${id}`-free: registered webhooks are named by their position in `webhooks`. */
    refusals: ((hooks: Webhook[]) => string)[];
  }[] = [
    { name: "a registered POST webhook answering true", webhooks: [["/true"]], policies: [], refusals: [] },
    { name: "a registered GET webhook answering true", webhooks: [["/true", "GET"]], policies: [], refusals: [] },
    { name: "the old spelling arePoliciesVerifed", webhooks: [["/old-spelling"]], policies: [], refusals: [] },
    { name: "a WEBHOOK rule answering true", webhooks: [], policies: [["allow", "/true"]], refusals: [] },
    {
      name: "a registered webhook answering false",
      webhooks: [["/false", "GET"]],
      policies: [],
      refusals: [(hooks) => `Webhook ${hooks[0]?.id} (${server.base}) refused: arePoliciesVerified false`],
    },
    {
      name: "a WEBHOOK rule answering false",
      webhooks: [],
      policies: [["deny", "/false"]],
      refusals: [() => `Webhook rule "deny" (${server.base}) refused: arePoliciesVerified false`],
    },
    {
      name: "a webhook that fails: the reason of the call",
      webhooks: [["/status-500"]],
      policies: [],
      refusals: [(hooks) => `Webhook ${hooks[0]?.id} (${server.base}) refused: status 500`],
    },
    {
      name: "several: every refusal named, registered webhooks first, in order",
      webhooks: [["/true"], ["/missing", "GET"], ["/false"]],
      policies: [
        ["allow", "/true"],
        ["deny", "/array"],
      ],
      refusals: [
        (hooks) => `Webhook ${hooks[1]?.id} (${server.base}) refused: response has no boolean arePoliciesVerified`,
        (hooks) => `Webhook ${hooks[2]?.id} (${server.base}) refused: arePoliciesVerified false`,
        () => `Webhook rule "deny" (${server.base}) refused: response is not a JSON object`,
      ],
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const hooks = c.webhooks.map(([path, type]) => registered(path, type));
      const policies = c.policies.map(([name, path]) => webhookPolicy(name, server.url(path)));
      const { outcome, calls } = await evaluate(input(hooks, policies));
      const reasons = c.refusals.map((refusal) => refusal(hooks));
      assert.deepEqual(
        outcome,
        reasons.length === 0
          ? { rule: "webhooks", passed: true }
          : { rule: "webhooks", passed: false, reason: reasons.join("; ") },
      );
      // Every target is called once, whatever the others answer.
      assert.deepEqual(
        calls.map((call) => call.path).sort(),
        [...c.webhooks.map(([path]) => path), ...c.policies.map(([, path]) => path)].sort(),
      );
    });
  }

  test("a refusal names the webhook by its origin only: its path and query stay out of the reason", async () => {
    const hook = registered("/false?token=dapp-secret-123");
    const policy = webhookPolicy("deny", `${server.url("/false")}/../false?key=other-secret`);
    const { outcome } = await evaluate(input([hook], [policy]));
    assert.deepEqual(outcome, {
      rule: "webhooks",
      passed: false,
      reason:
        `Webhook ${hook.id} (${server.base}) refused: arePoliciesVerified false; ` +
        `Webhook rule "deny" (${server.base}) refused: arePoliciesVerified false`,
    });
    assert.doesNotMatch(outcome.reason ?? "", /secret/);
  });

  test("a WEBHOOK rule whose URL does not parse: refused, named as an invalid URL", async () => {
    const { outcome, calls } = await evaluate(input([], [webhookPolicy("broken", "not a url")]));
    assert.deepEqual(outcome, {
      rule: "webhooks",
      passed: false,
      reason: 'Webhook rule "broken" (an invalid URL) refused: request failed (Invalid URL)',
    });
    assert.deepEqual(calls, []);
  });

  // Found while writing these tests: for a registered GET webhook the rule built the URL with its query before the
  // call, outside callWebhook's fail-closed handling, so a stored URL that did not parse made evaluate() throw.
  // Registration validates URLs, so only a row written otherwise reaches it.
  test("a registered GET webhook whose stored URL does not parse: refused like a POST one, not thrown", async () => {
    const hook: Webhook = { ...registered("/true", "GET"), url: "not a url" };
    const { outcome } = await evaluate(input([hook], []), rule);
    assert.deepEqual(outcome, {
      rule: "webhooks",
      passed: false,
      reason: `Webhook ${hook.id} (an invalid URL) refused: request failed (Invalid URL)`,
    });
  });

  test("without allowPrivate, a loopback webhook is refused before any connection", async () => {
    const strict = webhookRule({ ...SETTINGS, allowPrivate: false }, () => [], Date.now);
    const hook = registered("/true");
    const { outcome, calls } = await evaluate(input([hook], []), strict);
    assert.deepEqual(outcome, {
      rule: "webhooks",
      passed: false,
      reason: `Webhook ${hook.id} (${server.base}) refused: is 127.0.0.1, a loopback address`,
    });
    assert.deepEqual(calls, []);
  });

  test("the service's own address is never called", async () => {
    const self = webhookRule(SETTINGS, () => [{ address: "127.0.0.1", port: server.port }], Date.now);
    const hook = registered("/true");
    const { outcome, calls } = await evaluate(input([hook], []), self);
    assert.deepEqual(outcome, {
      rule: "webhooks",
      passed: false,
      reason: `Webhook ${hook.id} (${server.base}) refused: is 127.0.0.1 port ${server.port}, this service itself`,
    });
    assert.deepEqual(calls, []);
  });
});

describe("what each webhook receives", () => {
  const DATA = { user: "u-1", tier: 2, flags: { beta: true } };
  const signed = (headers: Record<string, string | string[] | undefined>, text: string) =>
    verifyWebhookSignature(
      SECRET,
      headers[SIGNATURE_HEADER] as string | undefined,
      headers[TIMESTAMP_HEADER] as string | undefined,
      text,
      // The rules here run on the wall clock (webhookRule's `now`), and so does this receiver.
      { nowSeconds: Math.floor(Date.now() / 1000) },
    );

  const cases: {
    name: string;
    webhookData?: Record<string, unknown>;
    target: () => { webhooks: Webhook[]; policies: ReadablePolicy[] };
    expected: { method: string; target: string; body: unknown };
  }[] = [
    {
      name: "a registered POST: {data: webhookData}",
      webhookData: DATA,
      target: () => ({ webhooks: [registered("/true")], policies: [] }),
      expected: { method: "POST", target: "/true", body: { data: DATA } },
    },
    {
      name: "a registered POST without webhookData: {data: {}}",
      target: () => ({ webhooks: [registered("/true")], policies: [] }),
      expected: { method: "POST", target: "/true", body: { data: {} } },
    },
    {
      name: "a registered GET: webhookData in the query, after the URL's own, non-strings as JSON",
      webhookData: DATA,
      target: () => ({ webhooks: [registered("/true?app=1", "GET")], policies: [] }),
      expected: {
        method: "GET",
        target: `/true?app=1&user=u-1&tier=2&flags=${encodeURIComponent('{"beta":true}')}`,
        body: "",
      },
    },
    {
      name: "a WEBHOOK rule: {data, userOp} with the operation's numbers in decimal",
      webhookData: DATA,
      target: () => ({ webhooks: [], policies: [webhookPolicy("rule", server.url("/true"))] }),
      expected: {
        method: "POST",
        target: "/true",
        body: { data: DATA, userOp: ENTRY_POINT_VERSIONS["0.6"].webhookJson(OP) },
      },
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const { webhooks, policies } = c.target();
      const { outcome, calls } = await evaluate(input(webhooks, policies, c.webhookData));
      assert.equal(outcome.passed, true);
      assert.equal(calls.length, 1);
      const [call] = calls;
      assert.ok(call);
      assert.deepEqual(
        { method: call.method, target: call.target, body: call.body === "" ? "" : JSON.parse(call.body) },
        c.expected,
      );
      // Signed with the account's secret: the POST body as sent, or the GET's path and query.
      assert.equal(signed(call.headers, call.method === "POST" ? call.body : call.target), true);
      assert.equal(signed(call.headers, `${call.body} `), false, "the signature covers exactly that text");
    });
  }

  test("a WEBHOOK rule on a v0.8 operation receives its own fields: factory, paymaster gas, eip7702Auth", async () => {
    const op: PartialUserOperationV07 = {
      entryPointVersion: "0.8",
      sender: OP.sender,
      nonce: 5n,
      factory: "0x7702000000000000000000000000000000000000",
      callData: "0x34fcd5be",
      callGasLimit: 1n,
      verificationGasLimit: 2n,
      preVerificationGas: 3n,
      maxFeePerGas: 4n,
      maxPriorityFeePerGas: 5n,
      paymasterVerificationGasLimit: 6n,
      paymasterPostOpGasLimit: 7n,
      eip7702Auth: { chainId: 1n, address: OP.sender, nonce: 8n, yParity: 0, r: "0x01", s: "0x02" },
    };
    const policies = [webhookPolicy("rule", server.url("/true"))];
    const { outcome, calls } = await evaluate({
      ...input([], policies),
      userOp: op,
      version: ENTRY_POINT_VERSIONS["0.8"],
    });
    assert.equal(outcome.passed, true);
    assert.deepEqual(JSON.parse(calls[0]?.body ?? "{}"), {
      data: {},
      userOp: {
        sender: OP.sender,
        nonce: "5",
        entryPointVersion: "0.8",
        factory: "0x7702000000000000000000000000000000000000",
        callData: "0x34fcd5be",
        callGasLimit: "1",
        verificationGasLimit: "2",
        preVerificationGas: "3",
        maxFeePerGas: "4",
        maxPriorityFeePerGas: "5",
        paymasterVerificationGasLimit: "6",
        paymasterPostOpGasLimit: "7",
        eip7702Auth: { chainId: "1", address: OP.sender, nonce: "8", yParity: "0", r: "0x01", s: "0x02" },
      },
    });
  });

  test("the secret is the account's: another account's secret does not verify", async () => {
    const { calls } = await evaluate(input([registered("/true")], []));
    const other = accountWebhookSecret(SETTINGS, "another-account");
    const [call] = calls;
    assert.ok(call);
    assert.notEqual(other, SECRET);
    assert.equal(
      verifyWebhookSignature(
        other,
        call.headers[SIGNATURE_HEADER] as string,
        call.headers[TIMESTAMP_HEADER] as string,
        call.body,
        { nowSeconds: Math.floor(Date.now() / 1000) },
      ),
      false,
    );
  });
});
