import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { test } from "node:test";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { buildApp } from "../../src/app";
import { Secret } from "../../src/config";
import { createMetrics } from "../../src/metrics/metrics";
import { createSigner } from "../../src/signer/signer";
import { createAccount } from "../../src/storage/accounts";
import { startTestApp, TEST_CHAINS, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { openTestDatabase } from "../helpers/database";
import { startWebhookServer } from "../helpers/webhookServer";

const userOp = (sender: string, nonce = "0x0") => ({
  sender,
  nonce,
  initCode: "0x",
  callData: "0x",
  callGasLimit: "0x186a0",
  verificationGasLimit: "0x186a0",
  preVerificationGas: "0xc350",
  maxFeePerGas: "0x3b9aca00",
  maxPriorityFeePerGas: "0xf4240",
});

const sender = (_i: number) => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

async function scrape(t: TestApp, headers: Record<string, string> = {}) {
  const response = await t.app.inject({ method: "GET", url: "/metrics", headers });
  return { status: response.statusCode, text: response.body, type: String(response.headers["content-type"]) };
}

/** Every label value of every series: `name{a="x",b="y"} value` → [["a","x"],["b","y"]]. */
function labelValues(text: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || !line.includes("{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    for (const match of labels.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
      pairs.push([match[1] as string, match[2] as string]);
  }
  return pairs;
}

/** Each label of the service's own metrics and the only values it may take (chain_id: the configured chains). */
const ALLOWED: Record<string, RegExp> = {
  chain_id: /^(31337|80002)$/,
  mode: /^(sponsored|erc20|unknown)$/,
  outcome: /^(sponsored|refused|error|ok|reverted|unavailable|verified|timeout|sent|retried|failed)$/,
  event: /^(deposit\.low|limit\.reached)$/,
  reason:
    /^(|fundingAndRules|walletDeployment|contractWhitelist|maxCostPerOp|maxGasPrice|timeWindow|senderLists|rateLimit|spendingLimits|deposit|webhooks|noVerifyingPaymaster|contractChecks|blockWindow|paused|invalidParams|refused|other|gasEstimationUnavailable|internal)$/,
  batch: /^(sponsorships|limit_checks)$/,
  kind: /^(reverted|unavailable)$/,
  version: /^(0\.6|0\.7|0\.8)$/,
  le: /^[\d.e+-]+|\+Inf$/,
};

test("decisions are counted by chain, mode, outcome and the refusing rule, and no label carries an unbounded value", async () => {
  const t = await startTestApp();
  try {
    const funded = await t.dapp();
    await linkFundingWallet(t, funded);
    await addPolicy(t, funded, "PAYMASTER_SA_LIMIT", {
      type: "SMART_ACCOUNT",
      cycleDuration: { value: 1, unit: "day" },
      threshold: 1,
      thresholdType: "COUNT",
    });
    const unfunded = await t.dapp();
    const senders = [sender(1), sender(2), sender(3)];
    for (const s of senders) {
      const reply = await rpc(t, funded, "pm_sponsorUserOperation", [userOp(s), { mode: "SPONSORED" }]);
      assert.notEqual(reply.body.result.paymasterAndData, "0x");
    }
    // The same sender's next operation: refused by its limit of one.
    const limited = await rpc(t, funded, "pm_sponsorUserOperation", [
      userOp(senders[0] as string, "0x1"),
      { mode: "SPONSORED" },
    ]);
    assert.equal(limited.body.result.paymasterAndData, "0x");
    await rpc(t, unfunded, "pm_sponsorUserOperation", [userOp(senders[1] as string), { mode: "SPONSORED" }]);
    // A request the method refuses before any rule runs.
    await rpc(t, funded, "pm_sponsorUserOperation", [{ sender: "nonsense" }, { mode: "SPONSORED" }]);

    const { status, text, type } = await scrape(t);
    assert.equal(status, 200);
    assert.match(type, /^text\/plain; version=0\.0\.4/);
    const total = "paymaster_sponsorship_decisions_total";
    assert.match(
      text,
      new RegExp(`^${total}\\{chain_id="31337",mode="sponsored",outcome="sponsored",reason=""\\} 3$`, "m"),
    );
    assert.match(
      text,
      new RegExp(`^${total}\\{chain_id="31337",mode="sponsored",outcome="refused",reason="spendingLimits"\\} 1$`, "m"),
    );
    assert.match(
      text,
      new RegExp(`^${total}\\{chain_id="31337",mode="sponsored",outcome="refused",reason="fundingAndRules"\\} 1$`, "m"),
    );
    assert.match(
      text,
      /^paymaster_sponsor_duration_seconds_count\{chain_id="31337",mode="sponsored",outcome="sponsored"\} 3$/m,
    );
    assert.match(text, /^paymaster_group_commit_batch_size_count\{batch="sponsorships"\} [1-9]/m);
    assert.match(text, /^paymaster_group_commit_duration_seconds_count\{batch="limit_checks",outcome="ok"\} [1-9]/m);

    const pairs = labelValues(text);
    assert.ok(pairs.length > 10);
    for (const [label, value] of pairs) {
      const allowed = ALLOWED[label];
      assert.ok(allowed, `label ${label} is one of the known bounded labels`);
      assert.match(value, allowed, `${label}="${value}" is a bounded value`);
    }
    for (const secret of [funded.apiKey, funded.token, ...senders]) assert.ok(!text.includes(secret));
  } finally {
    await t.close();
  }
});

test("an app built with its own metrics counts only its own decisions", async () => {
  const mine = createMetrics();
  const t = await startTestApp({ metrics: mine });
  const other = await startTestApp();
  try {
    const dapp = await other.dapp();
    await rpc(other, dapp, "pm_sponsorUserOperation", [userOp(sender(9)), { mode: "SPONSORED" }]);
    const text = await mine.registry.metrics();
    assert.doesNotMatch(text, /^paymaster_sponsorship_decisions_total\{/m);
    assert.match(
      (await scrape(other)).text,
      /^paymaster_sponsorship_decisions_total\{.*reason="fundingAndRules"\} 1$/m,
    );
  } finally {
    await t.close();
    await other.close();
  }
});

test("with METRICS_TOKEN, /metrics needs the bearer token", async () => {
  const token = "a-long-metrics-token-0123456789";
  const t = await startTestApp({ metricsToken: new Secret(token) });
  try {
    assert.equal((await scrape(t)).status, 401);
    assert.equal((await scrape(t, { authorization: "Bearer wrong-token-0123456789" })).status, 401);
    assert.equal((await scrape(t, { authorization: token })).status, 401);
    const allowed = await scrape(t, { authorization: `Bearer ${token}` });
    assert.equal(allowed.status, 200);
    assert.match(allowed.text, /# TYPE paymaster_sponsorship_decisions_total counter/);
  } finally {
    await t.close();
  }
});

test("/healthz answers without checking anything; /readyz reports the database, migrations, signer and each chain", async () => {
  // A node that answers eth_chainId, and a port where nothing listens.
  const node = http.createServer((_request, response) => {
    response.setHeader("content-type", "application/json");
    response.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: "0x7a69" }));
  });
  await new Promise<void>((resolve) => node.listen(0, "127.0.0.1", resolve));
  const up = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;
  const signer = createSigner(generatePrivateKey());
  const t = await startTestApp({
    signer,
    chains: new Map([
      [31337, { chainId: 31337, name: "local", rpcUrl: up, bundlerUrl: "http://127.0.0.1:9/rpc" }],
      [
        80002,
        {
          chainId: 80002,
          name: "Polygon Amoy",
          // Any chain may say how it charges for L1 data; /readyz names the model.
          l1DataFee: {
            model: "op-stack",
            oracle: "0x420000000000000000000000000000000000000f",
            marginPercent: 25,
            source: "chains file",
          },
        },
      ],
    ]),
  });
  try {
    const health = await t.app.inject({ method: "GET", url: "/healthz" });
    assert.equal(health.statusCode, 200);
    const ready = await t.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(ready.statusCode, 200, "a chain down degrades the service, it does not make it unready");
    assert.deepEqual(ready.json(), {
      status: "degraded",
      database: "ok",
      migrations: "done",
      signer: { kind: "key", address: signer.address },
      chains: [
        {
          chainId: 31337,
          name: "local",
          rpc: "reachable",
          bundler: "unreachable",
          l1DataFee: "none",
          contracts: { status: "not checked", failed: [] },
        },
        {
          chainId: 80002,
          name: "Polygon Amoy",
          rpc: "not configured",
          bundler: "not configured",
          l1DataFee: "op-stack",
          contracts: { status: "not checked", failed: [] },
        },
      ],
    });
    assert.ok(!ready.body.includes(up), "no RPC URL in the answer");

    // The database gone: not ready, while the process is still alive.
    await t.db.close();
    const unready = await t.app.inject({ method: "GET", url: "/readyz" });
    assert.equal(unready.statusCode, 503);
    assert.equal(unready.json().status, "unready");
    assert.equal(unready.json().database, "unreachable");
    assert.equal((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode, 200);
  } finally {
    await t.app.close();
    await new Promise((resolve) => node.close(resolve));
  }
});

test("webhook calls are counted and timed by outcome", async () => {
  const hooks = await startWebhookServer();
  const t = await startTestApp();
  try {
    const dapp = await t.dapp();
    await linkFundingWallet(t, dapp);
    await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/true") }, "yes");
    await addPolicy(t, dapp, "WEBHOOK", { url: hooks.url("/false") }, "no");
    const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp(sender(1)), { mode: "SPONSORED" }]);
    assert.equal(reply.body.result.paymasterAndData, "0x");
    const { text } = await scrape(t);
    assert.match(text, /^paymaster_webhook_calls_total\{outcome="verified"\} 1$/m);
    assert.match(text, /^paymaster_webhook_calls_total\{outcome="refused"\} 1$/m);
    assert.match(text, /^paymaster_webhook_duration_seconds_count\{outcome="verified"\} 1$/m);
    assert.match(text, /^paymaster_sponsorship_decisions_total\{.*outcome="refused",reason="webhooks"\} 1$/m);
    assert.ok(!text.includes(hooks.url("/")), "no webhook URL in a label");
  } finally {
    await t.close();
    await hooks.close();
  }
});

/** Log lines of an app built with a logger at `level`, after one sponsorship request and one management request. */
async function logLines(level: string): Promise<{ msg: string; req?: { url: string }; dapp?: string }[]> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).trim().split("\n"));
      done();
    },
  });
  const db = await openTestDatabase();
  const app = await buildApp(
    { db, chains: TEST_CHAINS, bodyLimitBytes: 64 * 1024, signer: createSigner(generatePrivateKey()), now: Date.now },
    { level, stream },
  );
  try {
    const owner = await createAccount(db, "logs", Date.now());
    const created = await app.inject({
      method: "POST",
      url: "/api/v2/public/sdk/paymasterParameters",
      headers: { authToken: owner.authToken, "content-type": "application/json" },
      payload: JSON.stringify({ name: "Logged dApp", type: "HYBRID", chainId: 31337, version: "1.0.0" }),
    });
    const { apiKey } = created.json().data as { apiKey: string };
    await app.inject({
      method: "POST",
      url: `/api/v1/31337/${apiKey}`,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "pm_sponsorUserOperation",
        params: [userOp(sender(1)), { mode: "SPONSORED" }],
      }),
    });
    await app.inject({ method: "GET", url: "/healthz" });
    return lines.map((line) => JSON.parse(line));
  } finally {
    await app.close();
    await db.close();
  }
}

test("one info line per decision; the RPC route's and the probes' access lines only at debug", async () => {
  const info = await logLines("info");
  const decisions = info.filter((line) => line.msg === "sponsorship decision");
  assert.equal(decisions.length, 1);
  assert.deepEqual(
    {
      ...decisions[0],
      level: undefined,
      time: undefined,
      pid: undefined,
      hostname: undefined,
      reqId: undefined,
      ms: undefined,
    },
    {
      level: undefined,
      time: undefined,
      pid: undefined,
      hostname: undefined,
      reqId: undefined,
      ms: undefined,
      msg: "sponsorship decision",
      chainId: 31337,
      dapp: "Logged dApp",
      mode: "sponsored",
      outcome: "refused",
      reason: "fundingAndRules",
    },
  );
  const accessUrls = (lines: typeof info) =>
    lines.filter((line) => line.msg === "incoming request").map((line) => line.req?.url ?? "");
  assert.deepEqual(accessUrls(info), ["/api/v2/public/sdk/paymasterParameters"]);
  const debug = await logLines("debug");
  assert.equal(accessUrls(debug).length, 3, "at debug, every request has its access line");
});

test("a gas estimation that cannot reach the chain counts as a failure and the decision as an error", async () => {
  const t = await startTestApp({
    chains: new Map([[31337, { chainId: 31337, name: "local", rpcUrl: "http://127.0.0.1:9/rpc" }]]),
  });
  try {
    const dapp = await t.dapp();
    const { sender: s, nonce, initCode, callData } = userOp(sender(1));
    const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [
      { sender: s, nonce, initCode, callData, signature: "0x" },
      { mode: "SPONSORED", calculateGasLimits: true },
    ]);
    assert.equal(reply.status, 503);
    const { text } = await scrape(t);
    assert.match(text, /^paymaster_gas_estimation_failures_total\{chain_id="31337",kind="unavailable"\} 1$/m);
    assert.match(
      text,
      /^paymaster_gas_estimation_duration_seconds_count\{chain_id="31337",outcome="unavailable"\} 1$/m,
    );
    assert.match(
      text,
      /^paymaster_sponsorship_decisions_total\{chain_id="31337",mode="sponsored",outcome="error",reason="gasEstimationUnavailable"\} 1$/m,
    );
  } finally {
    await t.close();
  }
});
