// PATCH /paymaster-policy/{policyId}: a rule's settings and/or name replaced, checked as on creation for its kind
// (which never changes); a spending limit's new settings restart its cycle; errors as the other policy endpoints give.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
let clockMs = Date.now();
before(async () => {
  t = await startTestApp({ now: () => clockMs });
});
after(() => t.close());

interface PolicyRecord {
  _id: string;
  name: string;
  policyType: string;
  active: boolean;
  policyData: Record<string, unknown>;
}

const auth = (d: Dapp) => ({ token: d.token, apiKey: d.apiKey });
const patch = (d: Dapp, id: string, body?: unknown) =>
  t.call("PATCH", `paymaster-policy/${id}`, { ...auth(d), ...(body === undefined ? {} : { body }) });
async function created(d: Dapp, name: string, policyType: string, policyData: unknown): Promise<PolicyRecord> {
  const reply = await t.call("POST", "paymaster-policy", { ...auth(d), body: { name, policyType, policyData } });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as PolicyRecord;
}
async function listed(d: Dapp): Promise<PolicyRecord[]> {
  const reply = await t.call("GET", "paymaster-policy", auth(d));
  assert.equal(reply.status, 200);
  return reply.body.data as PolicyRecord[];
}
async function updated(d: Dapp, id: string, body: unknown): Promise<PolicyRecord> {
  const reply = await patch(d, id, body);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  assert.equal(reply.body.message, "Paymaster Policy updated");
  const policy = reply.body.data as PolicyRecord;
  assert.deepEqual(
    (await listed(d)).find((p) => p._id === id),
    policy,
    "the answer is the rule as now listed",
  );
  return policy;
}

const A = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
const B = "0x2222222222222222222222222222222222222222";
const C = "0x3333333333333333333333333333333333333333";

describe("sender lists", () => {
  test("policyData replaces the whole list (lower case, repeats once); name alone keeps it; both at once", async () => {
    const d = await t.dapp();
    const list = await created(d, "vips", "SENDER_ALLOWLIST", { addresses: [A, B] });
    const replaced = await updated(d, list._id, {
      policyData: { addresses: [C, C.toUpperCase().replace("0X", "0x"), A] },
    });
    assert.deepEqual(replaced, { ...list, policyData: { addresses: [C, A.toLowerCase()] } });
    const renamed = await updated(d, list._id, { name: "friends" });
    assert.deepEqual(renamed, { ...replaced, name: "friends" });
    const both = await updated(d, list._id, {
      name: "nobody",
      policyData: { addresses: [] },
      policyType: "SENDER_ALLOWLIST",
    });
    assert.deepEqual(both, { ...list, name: "nobody", policyData: { addresses: [] } });
  });

  test("a paused list stays paused through an update", async () => {
    const d = await t.dapp();
    const list = await created(d, "abusers", "SENDER_BLOCKLIST", { addresses: [A] });
    assert.equal((await t.call("PATCH", `paymaster-policy/deactivate/${list._id}`, auth(d))).status, 200);
    const replaced = await updated(d, list._id, { policyData: { addresses: [B] } });
    assert.deepEqual([replaced.active, replaced.policyData], [false, { addresses: [B] }]);
  });

  test("100,000 addresses replace a list", async () => {
    const d = await t.dapp();
    const list = await created(d, "big", "SENDER_BLOCKLIST", { addresses: [A] });
    const many = Array.from({ length: 100_000 }, (_, i) => `0x${i.toString(16).padStart(40, "0")}`);
    const replaced = await updated(d, list._id, { policyData: { addresses: many } });
    assert.equal((replaced.policyData.addresses as string[]).length, 100_000);
  });
});

describe("the other kinds: the creation checks of each", () => {
  test("MAX_COST_PER_OP: new threshold; USD refused as on creation on a chain without a price", async () => {
    const d = await t.dapp();
    const cap = await created(d, "cap", "MAX_COST_PER_OP", { threshold: 0.001, thresholdType: "NATIVE_ASSET" });
    const raised = await updated(d, cap._id, { policyData: { threshold: 0.5, thresholdType: "NATIVE_ASSET" } });
    assert.deepEqual(raised.policyData, { threshold: 0.5, thresholdType: "NATIVE_ASSET" });
    const usd = await patch(d, cap._id, { policyData: { threshold: 1, thresholdType: "USD" } });
    assert.deepEqual(
      [usd.status, usd.body.message],
      [
        400,
        "policyData.thresholdType USD needs the native token's dollar price, which the chains file does not give for " +
          "chain 31337 (nativeUsdPrice): use NATIVE_ASSET or configure the price",
      ],
    );
    const missing = await patch(d, cap._id, { policyData: { threshold: 1 } });
    assert.deepEqual([missing.status, missing.body.message], [400, "policyData.thresholdType is required"]);
  });

  test("TIME_WINDOW: new bounds replace the old ones whole; backwards and empty refused", async () => {
    const d = await t.dapp();
    const window = await created(d, "w", "TIME_WINDOW", { startTimeInEpoch: 1000, endTimeInEpoch: 2000 });
    const later = await updated(d, window._id, { policyData: { endTimeInEpoch: 5000 } });
    assert.deepEqual(later.policyData, { endTimeInEpoch: 5000 });
    for (const [data, message] of [
      [
        { startTimeInEpoch: 9, endTimeInEpoch: 9 },
        "policyData.startTimeInEpoch must be before policyData.endTimeInEpoch",
      ],
      [{}, "policyData needs startTimeInEpoch, endTimeInEpoch or both"],
      [
        { startTimeInEpoch: -1 },
        "policyData.startTimeInEpoch must be a whole number of ms since the epoch, from 0 to 8640000000000000",
      ],
    ] as const) {
      const reply = await patch(d, window._id, { policyData: data });
      assert.deepEqual([reply.status, reply.body.message], [400, message]);
    }
  });

  test("WEBHOOK: a new url, checked as on creation", async () => {
    const d = await t.dapp();
    const hook = await created(d, "hook", "WEBHOOK", { url: "https://hooks.example.com/a" });
    const moved = await updated(d, hook._id, { policyData: { url: "https://hooks.example.com/b" } });
    assert.deepEqual(moved.policyData, { url: "https://hooks.example.com/b" });
    const bad = await patch(d, hook._id, { policyData: { url: "ftp://hooks.example.com/b" } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /^policyData\.url /);
  });

  test("WALLET_DEPLOYMENT: its only settings are none; a rename", async () => {
    const d = await t.dapp();
    const deploy = await created(d, "deploy", "WALLET_DEPLOYMENT", {});
    const same = await updated(d, deploy._id, { name: "deployments", policyData: {} });
    assert.deepEqual(same, { ...deploy, name: "deployments" });
  });

  test("PAYMASTER_SA_LIMIT: new settings checked as on creation and a new cycle; a rename keeps the cycle", async () => {
    const d = await t.dapp();
    const data = { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 10, thresholdType: "COUNT" };
    const limit = await created(d, "limit", "PAYMASTER_SA_LIMIT", data);
    clockMs += 60_000;
    const renamed = await updated(d, limit._id, { name: "daily" });
    assert.equal(renamed.policyData.startTimeInEpoch, limit.policyData.startTimeInEpoch, "a rename keeps the cycle");
    const replaced = await updated(d, limit._id, { policyData: { ...data, threshold: 20, cycleDuration: "3 hour" } });
    assert.deepEqual(replaced.policyData, {
      ...data,
      threshold: 20,
      cycleDuration: { value: 3, unit: "hour" },
      startTimeInEpoch: clockMs,
      durationInMs: 3 * 3_600_000,
    });
    const fractional = await patch(d, limit._id, { policyData: { ...data, threshold: 1.5 } });
    assert.deepEqual(
      [fractional.status, fractional.body.message],
      [400, "policyData.threshold must be a whole number of user operations when thresholdType is COUNT"],
    );
  });
});

describe("errors", () => {
  test("bad settings name the field (a sender list: the index), and nothing changes", async () => {
    const d = await t.dapp();
    const list = await created(d, "vips", "SENDER_ALLOWLIST", { addresses: [A] });
    const cases: [unknown, string][] = [
      [{ policyData: { addresses: [A, B, C, "0xnope"] } }, "policyData.addresses[3] must be a 20-byte hex address"],
      [{ policyData: { addresses: "0x" } }, "policyData.addresses must be an array"],
      [{ policyData: {} }, "policyData.addresses is required"],
      [{ policyData: [A] }, "policyData must be a JSON object"],
      [{ name: "" }, "name must not be empty"],
      [{}, "Request body needs policyData, name or both"],
      [undefined, "Request body must be a JSON object"],
      [{ policyType: "SENDER_BLOCKLIST", name: "x" }, "policyType cannot change: this rule is a SENDER_ALLOWLIST"],
    ];
    for (const [body, message] of cases) {
      const reply = await patch(d, list._id, body);
      assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message }], JSON.stringify(body));
    }
    assert.deepEqual(await listed(d), [list]);
  });

  test("a name another rule of the dApp has: the creation's answer, nothing changes", async () => {
    const d = await t.dapp();
    const first = await created(d, "first", "SENDER_BLOCKLIST", { addresses: [A] });
    const second = await created(d, "second", "SENDER_BLOCKLIST", { addresses: [B] });
    const reply = await patch(d, second._id, { name: "first", policyData: { addresses: [C] } });
    assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message: "Policy name already exists" }]);
    assert.deepEqual(await listed(d), [first, second]);
  });

  test("an unknown id, a non-UUID id or another dApp's rule: 404 Policy not found, as activate answers", async () => {
    const d = await t.dapp();
    const other = await t.dapp();
    const foreign = await created(other, "theirs", "SENDER_BLOCKLIST", { addresses: [A] });
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", foreign._id, "limit"]) {
      const body = { name: "mine" };
      const reply = await patch(d, id, body);
      assert.deepEqual([reply.status, reply.body], [404, { statusCode: 404, message: "Policy not found" }], id);
      const activate = await t.call("PATCH", `paymaster-policy/activate/${id}`, auth(d));
      assert.deepEqual([activate.status, activate.body], [reply.status, reply.body], `${id}: the same answer`);
    }
    assert.deepEqual(await listed(other), [foreign]);
  });

  test("without credentials: 401 before the body is read", async () => {
    const reply = await t.call("PATCH", "paymaster-policy/00000000-0000-4000-8000-000000000000", {
      body: { name: "x" },
    });
    assert.deepEqual([reply.status, reply.body.message], [401, "Auth token and API key is required in the headers"]);
  });

  test("the routes beside it keep their own: a limit update and activate are not read as a policyId", async () => {
    const d = await t.dapp();
    const data = { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 10, thresholdType: "COUNT" };
    const limit = await created(d, "limit", "PAYMASTER_SA_LIMIT", data);
    const byLimitRoute = await t.call("PATCH", `paymaster-policy/limit/${limit._id}`, {
      ...auth(d),
      body: { threshold: 3 },
    });
    assert.deepEqual([byLimitRoute.status, byLimitRoute.body.message], [200, "Paymaster Limit updated"]);
    const off = await t.call("PATCH", `paymaster-policy/deactivate/${limit._id}`, auth(d));
    assert.deepEqual([off.status, off.body.message], [200, "Paymaster Policy Deactivated!"]);
    const [now] = await listed(d);
    assert.deepEqual([now?.active, now?.policyData.threshold], [false, 3]);
  });
});
