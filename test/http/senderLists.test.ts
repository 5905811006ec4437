// SENDER_ALLOWLIST and SENDER_BLOCKLIST through the management API: created (up to 100,000 addresses, above the
// service's general body limit), listed, paused and resumed like the other rules, and the errors naming the entry.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const auth = (d: Dapp) => ({ token: d.token, apiKey: d.apiKey });
const create = (d: Dapp, body: unknown) => t.call("POST", "paymaster-policy", { ...auth(d), body });
const listed = async (d: Dapp) => {
  const reply = await t.call("GET", "paymaster-policy", auth(d));
  assert.equal(reply.status, 200);
  return reply.body.data as { _id: string; name: string; policyType: string; active: boolean; policyData: unknown }[];
};
const senderList = (policyType: string, addresses: unknown, name = "list") => ({
  name,
  policyType,
  policyData: { addresses },
});
/** n distinct addresses, the i-th ending in i. */
const addresses = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `0x${(from + i).toString(16).padStart(40, "0")}`);

const A = "0x4dF23B78543F5c2F9CBCDF09956288b3e97bb9a4";
const B = "0x2222222222222222222222222222222222222222";

describe("create, list, pause and resume", () => {
  for (const policyType of ["SENDER_ALLOWLIST", "SENDER_BLOCKLIST"]) {
    test(`${policyType}: stored in lower case, a repeat in any case kept once, listed, paused, resumed`, async () => {
      const d = await t.dapp();
      const reply = await create(
        d,
        senderList(policyType, [A, B, A.toLowerCase(), A.toUpperCase().replace("0X", "0x")]),
      );
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.equal(reply.body.message, "Paymaster Policy created successfully");
      const policy = reply.body.data as { _id: string; policyType: string; active: boolean; policyData: unknown };
      assert.deepEqual([policy.policyType, policy.active], [policyType, true]);
      assert.deepEqual(policy.policyData, { addresses: [A.toLowerCase(), B] });
      assert.deepEqual(await listed(d), [policy]);

      const paused = await t.call("PATCH", `paymaster-policy/deactivate/${policy._id}`, auth(d));
      assert.equal(paused.status, 200);
      assert.equal((await listed(d))[0]?.active, false);
      const resumed = await t.call("PATCH", `paymaster-policy/activate/${policy._id}`, auth(d));
      assert.equal(resumed.status, 200);
      assert.equal((await listed(d))[0]?.active, true);
    });
  }

  test("100,000 addresses: accepted although the body is far above the general limit, stored and listed whole", async () => {
    const d = await t.dapp();
    const many = addresses(100_000);
    const reply = await create(d, senderList("SENDER_ALLOWLIST", many, "big"));
    assert.equal(reply.status, 200, JSON.stringify(reply.body).slice(0, 300));
    const [stored] = await listed(d);
    assert.deepEqual(stored?.policyData, { addresses: many });
  });

  test("an empty list is a list: an allowlist of nobody, a blocklist of nobody", async () => {
    const d = await t.dapp();
    const reply = await create(d, senderList("SENDER_BLOCKLIST", []));
    assert.equal(reply.status, 200);
    assert.deepEqual((reply.body.data as { policyData: unknown }).policyData, { addresses: [] });
  });
});

describe("refused lists: 400 naming the field and the entry, nothing stored", () => {
  const cases: [string, unknown, string][] = [
    ["a bad address at index 3", [A, B, A, "0x1234", B], "policyData.addresses[3] must be a 20-byte hex address"],
    ["a number for an address", [A, 7], "policyData.addresses[1] must be a 20-byte hex address"],
    ["41 hex digits", [`${B}2`], "policyData.addresses[0] must be a 20-byte hex address"],
    ["no 0x", [B.slice(2)], "policyData.addresses[0] must be a 20-byte hex address"],
    ["not an array", A, "policyData.addresses must be an array"],
    ["100,001 addresses", addresses(100_001), "policyData.addresses must have at most 100000 items"],
  ];
  for (const [name, value, message] of cases) {
    test(name, async () => {
      const d = await t.dapp();
      const reply = await create(d, senderList("SENDER_ALLOWLIST", value));
      assert.deepEqual([reply.status, reply.body], [400, { statusCode: 400, message }]);
      assert.deepEqual(await listed(d), []);
    });
  }

  test("no addresses at all", async () => {
    const d = await t.dapp();
    const reply = await create(d, { name: "l", policyType: "SENDER_BLOCKLIST", policyData: {} });
    assert.deepEqual([reply.status, reply.body.message], [400, "policyData.addresses is required"]);
  });

  test("a body above the rule routes' 8 MiB is refused with that limit; other routes keep the general one", async () => {
    const d = await t.dapp();
    const text = JSON.stringify(senderList("SENDER_BLOCKLIST", addresses(200_000)));
    assert.ok(text.length > 8 * 1024 * 1024);
    const reply = await t.call("POST", "paymaster-policy", {
      ...auth(d),
      raw: { payload: text, contentType: "application/json" },
    });
    assert.deepEqual(
      [reply.status, reply.body.message],
      [400, "Request body is larger than the limit of 8388608 bytes"],
    );
    // The same 100 KB that a rule route takes is too much for the contract whitelist (the test app's limit: 64 KiB).
    const contract = await t.call("POST", "smart-contract", {
      ...auth(d),
      body: { name: "c", address: B, abi: JSON.stringify(addresses(2500)), whitelistedMethods: [] },
    });
    assert.deepEqual(
      [contract.status, contract.body.message],
      [400, "Request body is larger than the limit of 65536 bytes"],
    );
    const rule = await create(d, senderList("SENDER_BLOCKLIST", addresses(2500)));
    assert.equal(rule.status, 200);
  });
});
