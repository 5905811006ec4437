// RATE_LIMIT quotas on the RPC endpoint, on the service's injected clock: per client address (TRUST_PROXY honoured),
// per sender and per origin; over quota HTTP 429 with Retry-After and -32005 naming the quota, before anything is
// recorded; a new window admits again; paused quotas count nothing; paymasters never share a quota; and on
// PostgreSQL two instances share one count.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { buildApp } from "../../src/app";
import { createMetrics } from "../../src/metrics/metrics";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";
import { testDatabaseUrl } from "../helpers/database";
import { userOpV06 } from "../helpers/userOps";

const SENDER_A = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const SENDER_B = "0x1111111111111111111111111111111111111111";
/** A window boundary: windows of 60 s start at multiples of 60 s since the epoch. */
const WINDOW_START = Date.UTC(2027, 0, 1);
let clockMs = WINDOW_START + 15_000;
let t: TestApp;
let proxied: TestApp;
before(async () => {
  t = await startTestApp({ now: () => clockMs });
  // Behind one proxy: X-Forwarded-For names the client (app.inject connects from 127.0.0.1).
  proxied = await startTestApp({ now: () => clockMs, trustProxy: true });
});
after(async () => {
  await t.close();
  await proxied.close();
});

let nonce = 0;
interface Call {
  sender?: string;
  headers?: Record<string, string>;
  method?: string;
  app?: TestApp["app"];
}
async function call(on: TestApp, dapp: Dapp, options: Call = {}) {
  const op = userOpV06(options.sender ?? SENDER_A, nonce++);
  const method = options.method ?? "pm_sponsorUserOperation";
  const params =
    method === "pm_getPaymasterStubData"
      ? [op, "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789", `0x${dapp.chainId.toString(16)}`, {}]
      : [op, { mode: "SPONSORED" }];
  const response = await (options.app ?? on.app).inject({
    method: "POST",
    url: `/api/v1/${dapp.chainId}/${dapp.apiKey}`,
    headers: { "content-type": "application/json", ...options.headers },
    payload: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return { status: response.statusCode, retryAfter: response.headers["retry-after"], body: response.json() };
}

async function quotaDapp(on: TestApp, policyData: unknown, name = "per client") {
  const dapp = await on.dapp();
  await linkFundingWallet(on, dapp);
  const policyId = await addPolicy(on, dapp, "RATE_LIMIT", policyData, name);
  return { dapp, policyId };
}

test("per client address: the limit passes, the next is 429 with Retry-After and -32005, nothing recorded", async () => {
  clockMs = WINDOW_START + 15_000;
  const { dapp } = await quotaDapp(t, { scope: "ip", limit: 2, windowSeconds: 60 });
  for (let i = 0; i < 2; i++) {
    const admitted = await call(t, dapp);
    assert.equal(admitted.status, 200, JSON.stringify(admitted.body));
    assert.notEqual(admitted.body.result.paymasterAndData, "0x");
  }
  const refused = await call(t, dapp);
  assert.equal(refused.status, 429);
  assert.equal(refused.retryAfter, "45");
  assert.deepEqual(refused.body, {
    jsonrpc: "2.0",
    id: 7,
    error: {
      code: -32005,
      message: 'Quota "per client" exceeded: 2 requests per 60 s per client address; try again in 45 s',
    },
  });
  // Refused before the decision: only the two admitted requests have a record.
  assert.equal((await listSponsorships(t.db, dapp.paymasterId)).length, 2);
  // ERC-7677's stub counts as a request too.
  assert.equal((await call(t, dapp, { method: "pm_getPaymasterStubData" })).status, 429);

  clockMs = WINDOW_START + 60_000;
  assert.equal((await call(t, dapp)).status, 200, "a new window admits again");
});

test("per sender: each sender has its own quota", async () => {
  clockMs = WINDOW_START + 120_000;
  const { dapp } = await quotaDapp(t, { scope: "sender", limit: 1, windowSeconds: 60 }, "per sender");
  assert.equal((await call(t, dapp, { sender: SENDER_A })).status, 200);
  const refused = await call(t, dapp, { sender: SENDER_A.toLowerCase() });
  assert.equal(refused.status, 429, "the same sender in another case");
  assert.match(refused.body.error.message, /^Quota "per sender" exceeded: 1 requests per 60 s per sender;/);
  assert.equal((await call(t, dapp, { sender: SENDER_B })).status, 200);
});

test("per origin: each origin has its own quota, and calls without an Origin share one", async () => {
  clockMs = WINDOW_START + 180_000;
  const { dapp } = await quotaDapp(t, { scope: "origin", limit: 1, windowSeconds: 60 }, "per origin");
  const from = (origin: string) => ({ headers: { origin } });
  assert.equal((await call(t, dapp, from("https://app.example.com"))).status, 200);
  assert.equal((await call(t, dapp, from("https://APP.example.com"))).status, 429);
  assert.equal((await call(t, dapp, from("https://other.example.com"))).status, 200);
  assert.equal((await call(t, dapp)).status, 200);
  assert.equal((await call(t, dapp)).status, 429);
});

test("one paymaster's quota never touches another's, from the same address", async () => {
  clockMs = WINDOW_START + 240_000;
  const first = await quotaDapp(t, { scope: "ip", limit: 1, windowSeconds: 60 });
  const second = await quotaDapp(t, { scope: "ip", limit: 1, windowSeconds: 60 });
  assert.equal((await call(t, first.dapp)).status, 200);
  assert.equal((await call(t, first.dapp)).status, 429);
  assert.equal((await call(t, second.dapp)).status, 200);
});

test("a paused quota counts nothing and refuses nothing; resumed, it counts again", async () => {
  clockMs = WINDOW_START + 300_000;
  const { dapp, policyId } = await quotaDapp(t, { scope: "ip", limit: 1, windowSeconds: 60 });
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  const auth = { token: dapp.token, apiKey: dapp.apiKey };
  assert.equal((await t.call("PATCH", `paymaster-policy/deactivate/${policyId}`, auth)).status, 200);
  for (let i = 0; i < 3; i++) assert.equal((await call(t, dapp)).status, 200);
  assert.equal((await t.call("PATCH", `paymaster-policy/activate/${policyId}`, auth)).status, 200);
  assert.equal((await call(t, dapp)).status, 200);
  assert.equal((await call(t, dapp)).status, 429);
});

test("TRUST_PROXY: behind a trusted proxy each X-Forwarded-For client has its own quota; without, it is ignored", async () => {
  clockMs = WINDOW_START + 360_000;
  const forwarded = (ip: string) => ({ headers: { "x-forwarded-for": ip } });
  const behind = await quotaDapp(proxied, { scope: "ip", limit: 1, windowSeconds: 60 });
  assert.equal((await call(proxied, behind.dapp, forwarded("203.0.113.1"))).status, 200);
  assert.equal((await call(proxied, behind.dapp, forwarded("203.0.113.1"))).status, 429);
  assert.equal((await call(proxied, behind.dapp, forwarded("203.0.113.2"))).status, 200);

  const direct = await quotaDapp(t, { scope: "ip", limit: 1, windowSeconds: 60 });
  assert.equal((await call(t, direct.dapp, forwarded("203.0.113.1"))).status, 200);
  assert.equal((await call(t, direct.dapp, forwarded("203.0.113.2"))).status, 429, "a forged header changes nothing");
});

test("bad quota settings are refused with the field and the problem", async () => {
  const dapp = await t.dapp();
  const cases: [unknown, string][] = [
    [{ limit: 1, windowSeconds: 60 }, "policyData.scope is required"],
    [{ scope: "country", limit: 1, windowSeconds: 60 }, "policyData.scope must be one of ip, sender, origin"],
    [{ scope: "ip", limit: 0, windowSeconds: 60 }, "policyData.limit must be a whole number from 1 to 1000000"],
    [{ scope: "ip", limit: 1.5, windowSeconds: 60 }, "policyData.limit must be a whole number from 1 to 1000000"],
    [
      { scope: "ip", limit: 1, windowSeconds: 86_401 },
      "policyData.windowSeconds must be a whole number of seconds from 1 to 86400",
    ],
  ];
  for (const [policyData, message] of cases) {
    const reply = await t.call("POST", "paymaster-policy", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { name: "quota", policyType: "RATE_LIMIT", policyData },
    });
    assert.deepEqual([reply.status, reply.body.message], [400, message], JSON.stringify(policyData));
  }
});

test("two instances on one PostgreSQL share each quota: concurrent requests through both admit exactly the limit", {
  skip: testDatabaseUrl() ? false : "PGlite is one process's: its quotas are counted in that process",
}, async () => {
  clockMs = WINDOW_START + 420_000;
  const second = await buildApp({ ...t.ctx, metrics: createMetrics() });
  try {
    const { dapp } = await quotaDapp(t, { scope: "ip", limit: 10, windowSeconds: 60 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => call(t, dapp, i % 2 ? { app: second } : {})),
    );
    const statuses = answers.map((answer) => answer.status);
    assert.equal(statuses.filter((status) => status === 200).length, 10, statuses.join());
    assert.equal(statuses.filter((status) => status === 429).length, 20, statuses.join());
  } finally {
    await second.close();
  }
});
