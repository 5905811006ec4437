import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Dapp, type Reply, startTestApp, type TestApp } from "../helpers/app";
import { missingCredentials, wrongCredentials } from "../helpers/badCredentials";

let t: TestApp;
// The service's clock: cycle starts are read from it, and tests move it instead of sleeping.
let clockMs = Date.now();
const clock = () => clockMs;
const advance = (ms: number) => {
  clockMs += ms;
};
before(async () => {
  t = await startTestApp({ now: clock });
});
after(() => t.close());

const HOUR = 3_600_000;
const DAY = 86_400_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const AUTH_MESSAGE = "Auth token and API key is required in the headers";
const POLICY_TYPES_MESSAGE =
  "policyType must be one of PAYMASTER_SA_LIMIT, WEBHOOK, WALLET_DEPLOYMENT, MAX_COST_PER_OP, TIME_WINDOW, SENDER_ALLOWLIST, SENDER_BLOCKLIST, MAX_GAS_PRICE, RATE_LIMIT";

interface PolicyRecord {
  _id: string;
  name: string;
  policyType: string;
  organisationId: string;
  paymasterId: string;
  createdBy: string;
  chainId: number;
  active: boolean;
  policyData: Record<string, unknown>;
}

const limitData = (overrides: Record<string, unknown> = {}) => ({
  type: "PAYMASTER",
  cycleDuration: { value: 1, unit: "day" },
  threshold: 10,
  thresholdType: "COUNT",
  ...overrides,
});
const limitPolicy = (name = "daily limit", overrides: Record<string, unknown> = {}) => ({
  name,
  policyType: "PAYMASTER_SA_LIMIT",
  policyData: limitData(overrides),
});
const webhookPolicy = (name = "hook rule", url = "https://hooks.example.com/verify") => ({
  name,
  policyType: "WEBHOOK",
  policyData: { url },
});
const deploymentPolicy = (name = "deployments") => ({ name, policyType: "WALLET_DEPLOYMENT", policyData: {} });

/** A builder of request bodies for one rule type, for the describes that create rules of that type only. */
const policyOfType = (policyType: string) => (name: string, policyData: Record<string, unknown>) => ({
  name,
  policyType,
  policyData,
});

const auth = (d: Dapp) => ({ token: d.token, apiKey: d.apiKey });
const create = (d: Dapp, body: unknown) => t.call("POST", "paymaster-policy", { ...auth(d), body });
const updateLimit = (d: Dapp, id: string, body?: unknown) =>
  t.call("PATCH", `paymaster-policy/limit/${id}`, { ...auth(d), body });
const setActive = (d: Dapp, id: string, action: "activate" | "deactivate") =>
  t.call("PATCH", `paymaster-policy/${action}/${id}`, auth(d));

async function list(d: Dapp): Promise<PolicyRecord[]> {
  const reply = await t.call("GET", "paymaster-policy", auth(d));
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Paymaster Policies found!");
  return reply.body.data as PolicyRecord[];
}

async function created(d: Dapp, body: unknown): Promise<PolicyRecord> {
  const reply = await create(d, body);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.statusCode, 200);
  assert.equal(reply.body.message, "Paymaster Policy created successfully");
  return reply.body.data as PolicyRecord;
}

async function findById(d: Dapp, id: string): Promise<PolicyRecord> {
  const found = (await list(d)).find((p) => p._id === id);
  assert.ok(found, `policy ${id} is listed`);
  return found;
}

/** A dApp, a sibling of the same account and a stranger's, each with a limit: whose rules another may not touch. */
async function limitsOfThree() {
  const d = await t.dapp();
  const sibling = await t.dapp({ token: d.token });
  const stranger = await t.dapp();
  await created(d, limitPolicy("limit"));
  const siblings = await created(sibling, limitPolicy("sibling limit"));
  const strangers = await created(stranger, limitPolicy("stranger limit"));
  return { d, sibling, stranger, siblings, strangers };
}

function assertError(reply: Reply, status: number, message: string): void {
  assert.deepEqual([reply.status, reply.body], [status, { statusCode: status, message }]);
}

/** Asserts the refusal, then that the rule list is exactly what it was before the request. */
async function assertRefused(d: Dapp, request: () => Promise<Reply>, status: number, message: string) {
  const before = await list(d);
  assertError(await request(), status, message);
  assert.deepEqual(await list(d), before, "a refused request writes nothing");
}

describe("create policy (endpoints 8, 9, 10)", () => {
  test("PAYMASTER_SA_LIMIT, PAYMASTER scope, COUNT: the full record, cycle starting now", async () => {
    const d = await t.dapp();
    const before = clock();
    const policy = await created(d, limitPolicy("ops per day", { cycleDuration: { value: 2, unit: "day" } }));
    const afterCreate = clock();
    assert.match(policy._id, UUID);
    const { startTimeInEpoch, ...data } = policy.policyData;
    assert.equal(typeof startTimeInEpoch, "number");
    assert.ok((startTimeInEpoch as number) >= before && (startTimeInEpoch as number) <= afterCreate);
    assert.deepEqual(
      { ...policy, policyData: data },
      {
        _id: policy._id,
        name: "ops per day",
        policyType: "PAYMASTER_SA_LIMIT",
        organisationId: d.accountId,
        paymasterId: d.paymasterId,
        createdBy: d.accountId,
        chainId: 31337,
        active: true,
        policyData: {
          type: "PAYMASTER",
          cycleDuration: { value: 2, unit: "day" },
          threshold: 10,
          thresholdType: "COUNT",
          durationInMs: 2 * DAY,
        },
      },
    );
    assert.deepEqual(await list(d), [policy], "the list shows the same record");
  });

  test("PAYMASTER_SA_LIMIT, SMART_ACCOUNT scope, NATIVE_ASSET with a fractional ether threshold", async () => {
    const d = await t.dapp({ chainId: 80002 });
    const before = clock();
    const policy = await created(
      d,
      limitPolicy("per user gas", {
        type: "SMART_ACCOUNT",
        cycleDuration: { value: 6, unit: "hour" },
        threshold: 0.05,
        thresholdType: "NATIVE_ASSET",
      }),
    );
    const startTimeInEpoch = policy.policyData.startTimeInEpoch as number;
    assert.ok(startTimeInEpoch >= before && startTimeInEpoch <= clock());
    assert.equal(policy.chainId, 80002);
    assert.deepEqual(policy.policyData, {
      type: "SMART_ACCOUNT",
      cycleDuration: { value: 6, unit: "hour" },
      threshold: 0.05,
      thresholdType: "NATIVE_ASSET",
      startTimeInEpoch,
      durationInMs: 6 * HOUR,
    });
  });

  test("WEBHOOK: policyData holds the url", async () => {
    const d = await t.dapp();
    const policy = await created(d, webhookPolicy("webhook check", "https://hooks.example.com/verify?x=1"));
    assert.deepEqual(policy, {
      _id: policy._id,
      name: "webhook check",
      policyType: "WEBHOOK",
      organisationId: d.accountId,
      paymasterId: d.paymasterId,
      createdBy: d.accountId,
      chainId: 31337,
      active: true,
      policyData: { url: "https://hooks.example.com/verify?x=1" },
    });
    assert.match(policy._id, UUID);
    const http = await created(d, webhookPolicy("plain http", "http://127.0.0.1:8080/hook"));
    assert.deepEqual(http.policyData, { url: "http://127.0.0.1:8080/hook" });
  });

  test("WALLET_DEPLOYMENT: an empty object becomes {operator: walletDeployment}", async () => {
    const d = await t.dapp();
    const policy = await created(d, deploymentPolicy("deploy"));
    assert.deepEqual(policy, {
      _id: policy._id,
      name: "deploy",
      policyType: "WALLET_DEPLOYMENT",
      organisationId: d.accountId,
      paymasterId: d.paymasterId,
      createdBy: d.accountId,
      chainId: 31337,
      active: true,
      policyData: { operator: "walletDeployment" },
    });
  });

  test("a policy name is unique per paymaster; the same name on another dApp is fine", async () => {
    const d = await t.dapp();
    await created(d, limitPolicy("shared name"));
    await assertRefused(d, () => create(d, limitPolicy("shared name")), 400, "Policy name already exists");
    // Also across kinds: the name is the rule's, whatever it does.
    await assertRefused(d, () => create(d, deploymentPolicy("shared name")), 400, "Policy name already exists");
    await assertRefused(d, () => create(d, webhookPolicy("shared name")), 400, "Policy name already exists");
    const sibling = await t.dapp({ token: d.token });
    await created(sibling, limitPolicy("shared name"));
    const stranger = await t.dapp();
    await created(stranger, limitPolicy("shared name"));
    assert.equal((await list(d)).length, 1);
  });

  test("a body that is not a JSON object is refused", async () => {
    const d = await t.dapp();
    for (const body of [[1, 2], "text", 7, null]) {
      await assertRefused(d, () => create(d, body), 400, "Request body must be a JSON object");
    }
    await assertRefused(
      d,
      () => t.call("POST", "paymaster-policy", auth(d)),
      400,
      "Request body must be a JSON object",
    );
  });

  const topLevelCases: [string, Record<string, unknown>, string][] = [
    ["name missing", { ...limitPolicy(), name: undefined }, "name is required"],
    ["name a number", { ...limitPolicy(), name: 42 }, "name must be a string"],
    ["name blank", { ...limitPolicy(), name: "   " }, "name must not be empty"],
    ["name too long", { ...limitPolicy(), name: "n".repeat(101) }, "name must be at most 100 characters"],
    ["policyType missing", { ...limitPolicy(), policyType: undefined }, "policyType is required"],
    ["policyType unknown", { ...limitPolicy(), policyType: "SPENDING_LIMIT" }, POLICY_TYPES_MESSAGE],
    ["policyType lowercase", { ...limitPolicy(), policyType: "webhook" }, POLICY_TYPES_MESSAGE],
    ["policyType whitelisted contract", { ...limitPolicy(), policyType: "WHITELISTED_CONTRACT" }, POLICY_TYPES_MESSAGE],
    ["policyType a number", { ...limitPolicy(), policyType: 1 }, POLICY_TYPES_MESSAGE],
    ["policyData missing (limit)", { ...limitPolicy(), policyData: undefined }, "policyData is required"],
    ["policyData missing (webhook)", { ...webhookPolicy(), policyData: undefined }, "policyData is required"],
    ["policyData missing (deployment)", { ...deploymentPolicy(), policyData: undefined }, "policyData is required"],
    ["policyData null", { ...limitPolicy(), policyData: null }, "policyData must be a JSON object"],
    ["policyData a string", { ...deploymentPolicy(), policyData: "{}" }, "policyData must be a JSON object"],
    ["policyData an array", { ...deploymentPolicy(), policyData: [] }, "policyData must be a JSON object"],
    ["policyData a number", { ...webhookPolicy(), policyData: 3 }, "policyData must be a JSON object"],
  ];
  for (const [label, body, message] of topLevelCases) {
    test(`bad input: ${label} → 400 "${message}"`, async () => {
      const d = await t.dapp();
      await assertRefused(d, () => create(d, body), 400, message);
    });
  }

  const limitCases: [string, Record<string, unknown>, string][] = [
    ["type missing", { type: undefined }, "policyData.type is required"],
    ["type unknown", { type: "GLOBAL" }, "policyData.type must be one of PAYMASTER, SMART_ACCOUNT"],
    ["type a number", { type: 1 }, "policyData.type must be one of PAYMASTER, SMART_ACCOUNT"],
    ["cycleDuration missing", { cycleDuration: undefined }, "policyData.cycleDuration is required"],
    ["cycleDuration null", { cycleDuration: null }, "policyData.cycleDuration must be a JSON object"],
    ["cycleDuration a number", { cycleDuration: 3 }, "policyData.cycleDuration must be a JSON object"],
    [
      "cycleDuration a bad text",
      { cycleDuration: "fortnight" },
      'policyData.cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    ...["year", "hours", "weeks", "Month", "", 1].map((unit): [string, Record<string, unknown>, string] => [
      `cycleDuration.unit ${JSON.stringify(unit)}`,
      { cycleDuration: { value: 1, unit } },
      "policyData.cycleDuration.unit must be one of minute, hour, day, week, month",
    ]),
    [
      "cycleDuration.unit missing",
      { cycleDuration: { value: 1 } },
      "policyData.cycleDuration.unit must be one of minute, hour, day, week, month",
    ],
    ...[0, -1, 1.5, 100_001, 1e12, "1", null].map((value): [string, Record<string, unknown>, string] => [
      `cycleDuration.value ${JSON.stringify(value)}`,
      { cycleDuration: { value, unit: "hour" } },
      "policyData.cycleDuration.value must be a whole number from 1 to 100000",
    ]),
    [
      "cycleDuration.value missing",
      { cycleDuration: { unit: "day" } },
      "policyData.cycleDuration.value must be a whole number from 1 to 100000",
    ],
    ["thresholdType missing", { thresholdType: undefined }, "policyData.thresholdType is required"],
    [
      "thresholdType unknown",
      { thresholdType: "ETH" },
      "policyData.thresholdType must be one of COUNT, NATIVE_ASSET, USD",
    ],
    [
      "thresholdType lowercase",
      { thresholdType: "count" },
      "policyData.thresholdType must be one of COUNT, NATIVE_ASSET, USD",
    ],
    ["threshold missing", { threshold: undefined }, "policyData.threshold is required"],
    ...[0, -1, -0.5, "10", null, true, {}].map((threshold): [string, Record<string, unknown>, string] => [
      `threshold ${JSON.stringify(threshold)}`,
      { threshold },
      "policyData.threshold must be a positive number",
    ]),
    ["threshold huge", { threshold: 1e16 }, "policyData.threshold must be at most 1000000000000000"],
    [
      "threshold huge (NATIVE_ASSET)",
      { threshold: 1e300, thresholdType: "NATIVE_ASSET" },
      "policyData.threshold must be at most 1000000000000000",
    ],
    [
      "threshold fractional for COUNT",
      { threshold: 2.5, thresholdType: "COUNT" },
      "policyData.threshold must be a whole number of user operations when thresholdType is COUNT",
    ],
    [
      "threshold negative for NATIVE_ASSET",
      { threshold: -0.05, thresholdType: "NATIVE_ASSET" },
      "policyData.threshold must be a positive number",
    ],
  ];
  for (const [label, overrides, message] of limitCases) {
    test(`bad spending limit: ${label} → 400 "${message}"`, async () => {
      const d = await t.dapp();
      await assertRefused(d, () => create(d, limitPolicy("limit", overrides)), 400, message);
    });
  }

  const webhookCases: [string, unknown, string][] = [
    ["missing", undefined, "policyData.url is required"],
    ["a number", 5, "policyData.url must be a string"],
    ["empty", "", "policyData.url must not be empty"],
    ["not a URL", "not a url", "policyData.url must be a valid URL"],
    ["a bare host", "hooks.example.com/verify", "policyData.url must be a valid URL"],
    ["ftp", "ftp://hooks.example.com/verify", "policyData.url must be an http or https URL"],
    ["javascript", "javascript:alert(1)", "policyData.url must be an http or https URL"],
    ["file", "file:///etc/passwd", "policyData.url must be an http or https URL"],
  ];
  for (const [label, url, message] of webhookCases) {
    test(`bad webhook rule: url ${label} → 400 "${message}"`, async () => {
      const d = await t.dapp();
      const body = { name: "hook", policyType: "WEBHOOK", policyData: url === undefined ? {} : { url } };
      await assertRefused(d, () => create(d, body), 400, message);
    });
  }
});

describe("list policies (endpoint 11)", () => {
  test("a new dApp has no rules", async () => {
    const d = await t.dapp();
    assert.deepEqual(await list(d), []);
  });

  test("lists every rule in creation order, then the whitelisted contracts as WHITELISTED_CONTRACT", async () => {
    const d = await t.dapp();
    const limit = await created(d, limitPolicy("limit"));
    const hook = await created(d, webhookPolicy("hook"));
    const deploy = await created(d, deploymentPolicy("deploy"));
    const abi = JSON.stringify([
      { type: "function", name: "mint", inputs: [{ type: "uint256" }] },
      { type: "function", name: "burn", inputs: [] },
    ]);
    const address = "0x00000000000000000000000000000000000000Aa";
    const contract = await t.call("POST", "smart-contract", {
      ...auth(d),
      body: { name: "token", address, abi, whitelistedMethods: ["mint"] },
    });
    assert.equal(contract.status, 200, JSON.stringify(contract.body));

    const policies = await list(d);
    assert.deepEqual(policies.slice(0, 3), [limit, hook, deploy]);
    assert.equal(policies.length, 4);
    const entry = policies[3] as PolicyRecord;
    assert.match(entry._id, UUID);
    assert.deepEqual(
      { ...entry, _id: "" },
      {
        _id: "",
        name: "token",
        policyType: "WHITELISTED_CONTRACT",
        organisationId: d.accountId,
        paymasterId: d.paymasterId,
        createdBy: d.accountId,
        chainId: 31337,
        active: true,
        policyData: { address: address.toLowerCase(), whitelistedMethods: ["mint"] },
      },
    );
  });

  test("shows the dApp's rules only: not those of a sibling dApp nor of another account", async () => {
    const d = await t.dapp();
    const sibling = await t.dapp({ token: d.token });
    const stranger = await t.dapp();
    const mine = await created(d, limitPolicy("mine"));
    await created(sibling, limitPolicy("sibling's"));
    await created(stranger, deploymentPolicy("stranger's"));
    assert.deepEqual(await list(d), [mine]);
    assert.deepEqual(
      (await list(sibling)).map((p) => p.name),
      ["sibling's"],
    );
  });
});

describe("authentication of endpoints 8 to 14", () => {
  test("a missing, unknown or foreign authToken or apiKey gets 401 and writes nothing", async () => {
    const d = await t.dapp();
    const stranger = await t.dapp();
    const policy = await created(d, limitPolicy("guarded"));
    const badAuths = [...missingCredentials(d), ...wrongCredentials(d, stranger)];
    const before = await list(d);
    const strangerBefore = await list(stranger);
    for (const headers of badAuths) {
      for (const [method, path, body] of [
        ["POST", "paymaster-policy", limitPolicy("intruder")],
        ["GET", "paymaster-policy", undefined],
        ["PATCH", `paymaster-policy/limit/${policy._id}`, { threshold: 1 }],
        ["PATCH", `paymaster-policy/deactivate/${policy._id}`, undefined],
        ["PATCH", `paymaster-policy/activate/${policy._id}`, undefined],
      ] as const) {
        const reply = await t.call(method, path, { ...headers, body });
        assertError(reply, 401, AUTH_MESSAGE);
      }
    }
    assert.deepEqual(await list(d), before);
    assert.deepEqual(await list(stranger), strangerBefore);
  });
});

describe("update a spending limit (endpoint 12)", () => {
  test("changes the threshold and restarts the cycle at the time of the update", async () => {
    const d = await t.dapp();
    const policy = await created(d, limitPolicy("limit"));
    advance(20);
    const before = clock();
    const reply = await updateLimit(d, policy._id, { threshold: 25 });
    const afterUpdate = clock();
    assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Paymaster Limit updated" }]);
    const updated = await findById(d, policy._id);
    const start = updated.policyData.startTimeInEpoch as number;
    assert.ok(start >= before && start <= afterUpdate, `${start} is the time of the update`);
    assert.ok(start > (policy.policyData.startTimeInEpoch as number), "the cycle moved forward");
    assert.deepEqual(updated, {
      ...policy,
      policyData: { ...policy.policyData, threshold: 25, startTimeInEpoch: start },
    });
  });

  test("changes name, threshold type and cycle (object form) together", async () => {
    const d = await t.dapp();
    const policy = await created(d, limitPolicy("before"));
    const reply = await updateLimit(d, policy._id, {
      name: "after",
      threshold: 0.25,
      thresholdType: "NATIVE_ASSET",
      cycleDuration: { value: 3, unit: "hour" },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const updated = await findById(d, policy._id);
    assert.equal(updated.name, "after");
    assert.deepEqual(updated.policyData, {
      type: "PAYMASTER",
      cycleDuration: { value: 3, unit: "hour" },
      threshold: 0.25,
      thresholdType: "NATIVE_ASSET",
      startTimeInEpoch: updated.policyData.startTimeInEpoch,
      durationInMs: 3 * HOUR,
    });
    assert.equal(updated.policyData.type, "PAYMASTER", "the scope is not changed by the update");
  });

  for (const [text, cycle, durationInMs] of [
    ["3 hour", { value: 3, unit: "hour" }, 3 * HOUR],
    ["3h", { value: 3, unit: "hour" }, 3 * HOUR],
    ["1 day", { value: 1, unit: "day" }, DAY],
    ["2 days", { value: 2, unit: "day" }, 2 * DAY],
    ["12 hours", { value: 12, unit: "hour" }, 12 * HOUR],
  ] as const) {
    test(`cycleDuration as the text "${text}"`, async () => {
      const d = await t.dapp();
      const policy = await created(d, limitPolicy("limit", { cycleDuration: { value: 5, unit: "day" } }));
      const reply = await updateLimit(d, policy._id, { cycleDuration: text });
      assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Paymaster Limit updated" }]);
      const updated = await findById(d, policy._id);
      assert.deepEqual(updated.policyData.cycleDuration, cycle);
      assert.equal(updated.policyData.durationInMs, durationInMs);
    });
  }

  test("an empty body, or none at all, only restarts the cycle", async () => {
    const d = await t.dapp();
    const policy = await created(d, limitPolicy("limit", { threshold: 7 }));
    let previous = policy;
    for (const options of [
      { body: {} },
      {},
      { raw: { payload: "", contentType: "application/json" } },
      { raw: { payload: "  \n", contentType: "application/json" } },
    ]) {
      advance(20);
      const before = clock();
      const reply = await t.call("PATCH", `paymaster-policy/limit/${policy._id}`, { ...auth(d), ...options });
      assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Paymaster Limit updated" }]);
      const updated = await findById(d, policy._id);
      const start = updated.policyData.startTimeInEpoch as number;
      assert.ok(start >= before && start > (previous.policyData.startTimeInEpoch as number));
      assert.deepEqual(updated, { ...policy, policyData: { ...policy.policyData, startTimeInEpoch: start } });
      previous = updated;
    }
  });

  test("a paused limit stays paused through an update", async () => {
    const d = await t.dapp();
    const policy = await created(d, limitPolicy("limit"));
    assert.equal((await setActive(d, policy._id, "deactivate")).status, 200);
    assert.equal((await updateLimit(d, policy._id, { threshold: 3 })).status, 200);
    const updated = await findById(d, policy._id);
    assert.equal(updated.active, false);
    assert.equal(updated.policyData.threshold, 3);
  });

  test("renaming to the name of another rule of the dApp is refused, and nothing changes", async () => {
    const d = await t.dapp();
    await created(d, deploymentPolicy("taken"));
    const policy = await created(d, limitPolicy("limit"));
    advance(5);
    await assertRefused(
      d,
      () => updateLimit(d, policy._id, { name: "taken", threshold: 99 }),
      400,
      "Policy name already exists",
    );
    // Its own name, and a name used by another dApp, are fine.
    const sibling = await t.dapp({ token: d.token });
    await created(sibling, limitPolicy("sibling name"));
    assert.equal((await updateLimit(d, policy._id, { name: "limit" })).status, 200);
    assert.equal((await updateLimit(d, policy._id, { name: "sibling name" })).status, 200);
    assert.equal((await findById(d, policy._id)).name, "sibling name");
  });

  test("a WEBHOOK or WALLET_DEPLOYMENT rule has no limit to update", async () => {
    const d = await t.dapp();
    for (const body of [webhookPolicy("hook"), deploymentPolicy("deploy")]) {
      const policy = await created(d, body);
      await assertRefused(
        d,
        () => updateLimit(d, policy._id, { threshold: 5 }),
        400,
        `Policy ${policy._id} is a ${policy.policyType} policy; only PAYMASTER_SA_LIMIT has a limit`,
      );
    }
  });

  test("an unknown id, a non-UUID id or another dApp's rule is 404 Policy not found", async () => {
    const { d, sibling, stranger, siblings, strangers } = await limitsOfThree();
    for (const id of [
      "00000000-0000-4000-8000-000000000000",
      "not-a-uuid",
      "1",
      "x".repeat(300),
      encodeURIComponent("' OR 1=1 --"),
      siblings._id,
      strangers._id,
    ]) {
      await assertRefused(d, () => updateLimit(d, id, { threshold: 2 }), 404, "Policy not found");
    }
    assert.deepEqual(await findById(sibling, siblings._id), siblings, "the sibling's rule is untouched");
    assert.deepEqual(await findById(stranger, strangers._id), strangers, "the stranger's rule is untouched");
  });

  const updateCases: [string, unknown, string][] = [
    ["a body that is an array", [1], "Request body must be a JSON object"],
    ["a body that is a string", "3 hour", "Request body must be a JSON object"],
    ["name a number", { name: 5 }, "name must be a string"],
    ["name blank", { name: " " }, "name must not be empty"],
    ["name null", { name: null }, "name is required"],
    ["threshold 0", { threshold: 0 }, "threshold must be a positive number"],
    ["threshold negative", { threshold: -3 }, "threshold must be a positive number"],
    ["threshold a string", { threshold: "5" }, "threshold must be a positive number"],
    ["threshold huge", { threshold: 1e20 }, "threshold must be at most 1000000000000000"],
    [
      "threshold fractional for COUNT",
      { threshold: 1.5 },
      "threshold must be a whole number of user operations when thresholdType is COUNT",
    ],
    [
      "thresholdType COUNT with the current fractional threshold",
      { thresholdType: "COUNT" },
      "threshold must be a whole number of user operations when thresholdType is COUNT",
    ],
    ["thresholdType unknown", { thresholdType: "GAS" }, "thresholdType must be one of COUNT, NATIVE_ASSET, USD"],
    ["thresholdType a number", { thresholdType: 0 }, "thresholdType must be one of COUNT, NATIVE_ASSET, USD"],
    [
      'cycleDuration "fortnight"',
      { cycleDuration: "fortnight" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration "3 fortnights"',
      { cycleDuration: "3 fortnights" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration "3m" (a minute or a month?)',
      { cycleDuration: "3m" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration "1.5 hour"',
      { cycleDuration: "1.5 hour" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration "-1 day"',
      { cycleDuration: "-1 day" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration ""',
      { cycleDuration: "" },
      'cycleDuration must be an object {value, unit} or a text like "3 hour", "1 day", "30 min", "1 week" or "1 month"',
    ],
    [
      'cycleDuration "0 hour"',
      { cycleDuration: "0 hour" },
      "cycleDuration.value must be a whole number from 1 to 100000",
    ],
    [
      "cycleDuration a huge text",
      { cycleDuration: "99999999999999999999 day" },
      "cycleDuration.value must be a whole number from 1 to 100000",
    ],
    [
      "cycleDuration unit year",
      { cycleDuration: { value: 1, unit: "year" } },
      "cycleDuration.unit must be one of minute, hour, day, week, month",
    ],
    [
      "thresholdType USD on a chain without a native token price",
      { thresholdType: "USD" },
      "thresholdType USD needs the native token's dollar price, which the chains file does not give for chain 31337 " +
        "(nativeUsdPrice): use NATIVE_ASSET or configure the price",
    ],
    [
      "cycleDuration value 0",
      { cycleDuration: { value: 0, unit: "day" } },
      "cycleDuration.value must be a whole number from 1 to 100000",
    ],
    ["cycleDuration null", { cycleDuration: null }, "cycleDuration must be a JSON object"],
    ["cycleDuration an array", { cycleDuration: [3, "hour"] }, "cycleDuration must be a JSON object"],
  ];
  for (const [label, body, message] of updateCases) {
    test(`bad update: ${label} → 400 "${message}", and the cycle is not restarted`, async () => {
      const d = await t.dapp();
      const policy = await created(
        d,
        limitPolicy(
          "limit",
          label.includes("current fractional") ? { thresholdType: "NATIVE_ASSET", threshold: 0.5 } : {},
        ),
      );
      advance(5);
      await assertRefused(d, () => updateLimit(d, policy._id, body), 400, message);
    });
  }
});

describe("deactivate and activate a policy (endpoints 13 and 14)", () => {
  test("toggles active on every kind of rule and never moves the cycle", async () => {
    const d = await t.dapp();
    const policies = [
      await created(d, limitPolicy("limit")),
      await created(d, webhookPolicy("hook")),
      await created(d, deploymentPolicy("deploy")),
    ];
    advance(20);
    for (const policy of policies) {
      const off = await setActive(d, policy._id, "deactivate");
      assert.deepEqual([off.status, off.body], [200, { statusCode: 200, message: "Paymaster Policy Deactivated!" }]);
      assert.deepEqual(await findById(d, policy._id), { ...policy, active: false }, "only active changed");
      const again = await setActive(d, policy._id, "deactivate");
      assert.deepEqual(
        [again.status, again.body],
        [200, { statusCode: 200, message: "Paymaster Policy Deactivated!" }],
      );
      advance(20);
      const on = await setActive(d, policy._id, "activate");
      assert.deepEqual([on.status, on.body], [200, { statusCode: 200, message: "Paymaster Policy Activated!" }]);
      assert.deepEqual(await findById(d, policy._id), policy, "active again, same cycle start");
    }
  });

  test("only the named rule changes", async () => {
    const d = await t.dapp();
    const a = await created(d, limitPolicy("a"));
    const b = await created(d, limitPolicy("b"));
    assert.equal((await setActive(d, a._id, "deactivate")).status, 200);
    assert.deepEqual(
      (await list(d)).map((p) => [p.name, p.active]),
      [
        ["a", false],
        ["b", true],
      ],
    );
    assert.equal((await findById(d, b._id)).active, true);
  });

  test("PATCH deactivate with content-type application/json and an empty body works", async () => {
    const d = await t.dapp();
    const policy = await created(d, limitPolicy("limit"));
    const reply = await t.call("PATCH", `paymaster-policy/deactivate/${policy._id}`, {
      ...auth(d),
      raw: { payload: "", contentType: "application/json" },
    });
    assert.deepEqual([reply.status, reply.body], [200, { statusCode: 200, message: "Paymaster Policy Deactivated!" }]);
    assert.equal((await findById(d, policy._id)).active, false);
    const on = await t.call("PATCH", `paymaster-policy/activate/${policy._id}`, {
      ...auth(d),
      raw: { payload: "", contentType: "application/json" },
    });
    assert.deepEqual([on.status, on.body], [200, { statusCode: 200, message: "Paymaster Policy Activated!" }]);
    // A JSON body is ignored, too.
    const withBody = await t.call("PATCH", `paymaster-policy/deactivate/${policy._id}`, { ...auth(d), body: {} });
    assert.equal(withBody.status, 200);
  });

  for (const action of ["deactivate", "activate"] as const) {
    test(`${action}: an unknown id, a non-UUID id or another dApp's rule is 404 Policy not found`, async () => {
      const { d, sibling, stranger, siblings, strangers } = await limitsOfThree();
      if (action === "activate") {
        assert.equal((await setActive(sibling, siblings._id, "deactivate")).status, 200);
        assert.equal((await setActive(stranger, strangers._id, "deactivate")).status, 200);
      }
      const siblingBefore = await list(sibling);
      const strangerBefore = await list(stranger);
      for (const id of ["00000000-0000-4000-8000-000000000000", "nope", "x".repeat(300), siblings._id, strangers._id]) {
        await assertRefused(d, () => setActive(d, id, action), 404, "Policy not found");
      }
      assert.deepEqual(await list(sibling), siblingBefore);
      assert.deepEqual(await list(stranger), strangerBefore);
    });
  }
});

describe("MAX_COST_PER_OP: a per-operation cost cap", () => {
  const capPolicy = policyOfType("MAX_COST_PER_OP");

  test("created with its ether threshold as given, listed, paused and resumed like the other rules", async () => {
    const d = await t.dapp();
    const policy = await created(d, capPolicy("one op", { threshold: 0.001, thresholdType: "NATIVE_ASSET" }));
    assert.match(policy._id, UUID);
    assert.deepEqual(policy, {
      _id: policy._id,
      name: "one op",
      policyType: "MAX_COST_PER_OP",
      organisationId: d.accountId,
      paymasterId: d.paymasterId,
      createdBy: d.accountId,
      chainId: 31337,
      active: true,
      policyData: { threshold: 0.001, thresholdType: "NATIVE_ASSET" },
    });
    assert.deepEqual(await list(d), [policy]);
    assert.equal((await setActive(d, policy._id, "deactivate")).status, 200);
    assert.deepEqual(await findById(d, policy._id), { ...policy, active: false });
    assert.equal((await setActive(d, policy._id, "activate")).status, 200);
    assert.deepEqual(await findById(d, policy._id), policy);
  });

  test("USD on a chain without a native token price is refused; nothing is stored", async () => {
    const d = await t.dapp();
    await assertRefused(
      d,
      () => create(d, capPolicy("dollars", { threshold: 5, thresholdType: "USD" })),
      400,
      "policyData.thresholdType USD needs the native token's dollar price, which the chains file does not give for " +
        "chain 31337 (nativeUsdPrice): use NATIVE_ASSET or configure the price",
    );
  });

  const bad: [string, Record<string, unknown>, string][] = [
    [
      "a zero threshold",
      { threshold: 0, thresholdType: "NATIVE_ASSET" },
      "policyData.threshold must be a positive number",
    ],
    [
      "a text threshold",
      { threshold: "1", thresholdType: "NATIVE_ASSET" },
      "policyData.threshold must be a positive number",
    ],
    ["no threshold", { thresholdType: "NATIVE_ASSET" }, "policyData.threshold is required"],
    ["no thresholdType", { threshold: 1 }, "policyData.thresholdType is required"],
    [
      "a COUNT thresholdType",
      { threshold: 1, thresholdType: "COUNT" },
      "policyData.thresholdType must be one of NATIVE_ASSET, USD",
    ],
  ];
  for (const [name, policyData, message] of bad) {
    test(`${name}: 400 naming the field`, async () => {
      const d = await t.dapp();
      await assertRefused(d, () => create(d, capPolicy("cap", policyData)), 400, message);
    });
  }
});

describe("TIME_WINDOW: sponsor only between two instants", () => {
  const windowPolicy = policyOfType("TIME_WINDOW");

  test("created with the bounds given (either may be left out), listed, paused and resumed", async () => {
    const d = await t.dapp();
    const both = await created(d, windowPolicy("launch", { startTimeInEpoch: 1_000, endTimeInEpoch: 2_000 }));
    const from = await created(d, windowPolicy("from", { startTimeInEpoch: 1_000 }));
    const until = await created(d, windowPolicy("until", { endTimeInEpoch: 2_000 }));
    assert.deepEqual(
      [both, from, until].map((p) => [p.policyType, p.active, p.policyData]),
      [
        ["TIME_WINDOW", true, { startTimeInEpoch: 1_000, endTimeInEpoch: 2_000 }],
        ["TIME_WINDOW", true, { startTimeInEpoch: 1_000 }],
        ["TIME_WINDOW", true, { endTimeInEpoch: 2_000 }],
      ],
    );
    assert.deepEqual(await list(d), [both, from, until]);
    assert.equal((await setActive(d, both._id, "deactivate")).status, 200);
    assert.deepEqual(await findById(d, both._id), { ...both, active: false });
    assert.equal((await setActive(d, both._id, "activate")).status, 200);
    assert.deepEqual(await findById(d, both._id), both);
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ["no bound", {}, "policyData needs startTimeInEpoch, endTimeInEpoch or both"],
    [
      "start after end",
      { startTimeInEpoch: 2_000, endTimeInEpoch: 1_000 },
      "policyData.startTimeInEpoch must be before policyData.endTimeInEpoch",
    ],
    [
      "start equal to end",
      { startTimeInEpoch: 2_000, endTimeInEpoch: 2_000 },
      "policyData.startTimeInEpoch must be before policyData.endTimeInEpoch",
    ],
    [
      "a fractional start",
      { startTimeInEpoch: 1.5 },
      "policyData.startTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
    ],
    [
      "a negative end",
      { endTimeInEpoch: -1 },
      "policyData.endTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
    ],
    [
      "an end past the last date",
      { endTimeInEpoch: 8_640_000_000_000_001 },
      "policyData.endTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
    ],
    [
      "a text start",
      { startTimeInEpoch: "2027-01-01" },
      "policyData.startTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
    ],
  ];
  for (const [name, policyData, message] of bad) {
    test(`${name}: 400 naming the field`, async () => {
      const d = await t.dapp();
      await assertRefused(d, () => create(d, windowPolicy("window", policyData)), 400, message);
    });
  }
});
