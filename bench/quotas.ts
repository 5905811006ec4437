// Benchmark: RATE_LIMIT quotas. Two questions, each answered A/B in the same run:
// 1. A flood from one client address at the service's full speed (autocannon in a worker thread, so the service's
//    event loop is its own) while another address sponsors at a wallet's pace: that address's p50/p99 and success
//    rate with no flood, with the flood held by a per-address quota, and with the same flood and no quota.
// 2. What a quota check adds to a sponsorship: service CPU per sponsorship (app.inject, no network, groups of 50
//    concurrent requests) for a paymaster without a quota and the same paymaster with one, rounds alternated; and
//    what the quota path costs a paymaster that has no quota (the early return, timed alone).
//   npx tsx bench/quotas.ts                   on PGlite (quotas counted in the process)
//   DATABASE_URL=postgres://… npx tsx bench/quotas.ts     on PostgreSQL (counted in the database; a schema of its own)
//   options: --seconds N (each flood phase, default 10), --rounds N (CPU rounds per arm, default 5), --requests N
//   (sponsorships per CPU round, default 1000), --connections N (the flood's, default 32), --cpu-only (question 2 only)
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { originVerdict } from "../src/rpc/allowedOrigins";
import { loadSponsorshipSetup } from "../src/sponsorship/loadSetup";
import { overQuota } from "../src/sponsorship/rules/rateLimit";
import { MemoryQuotaCounter } from "../src/storage/quotaCounter";
import { type Dapp, startTestApp, type TestApp } from "../test/helpers/app";
import { addPolicy, linkFundingWallet } from "../test/helpers/dappSetup";
import { userOpV06 } from "../test/helpers/userOps";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    rounds: { type: "string", default: "5" },
    requests: { type: "string", default: "1000" },
    connections: { type: "string", default: "32" },
    "cpu-only": { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const requests = Number(values.requests);
const connections = Number(values.connections);

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
const FLOODER = "203.0.113.66";
const WALLET = "198.51.100.7";
/** The honest address's pace: one sponsorship every 200 ms, a busy wallet's rate. */
const WALLET_GAP_MS = 200;
/** Per address: twice the honest address's pace, far below what one flooding address sends. */
const QUOTA = { limit: 10, windowSeconds: 1 };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] as number;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let nonce = 0;
const body = (sender = SENDER) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "pm_sponsorUserOperation",
    params: [userOpV06(sender, nonce++), { mode: "SPONSORED" }],
  });

async function sponsoringDapp(t: TestApp, quota?: { limit: number; windowSeconds: number }): Promise<Dapp> {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {});
  if (quota) await addPolicy(t, dapp, "RATE_LIMIT", { scope: "ip", ...quota }, "per address");
  return dapp;
}

/** The honest wallet, paced, for `ms`: each answer's time, and whether it was a signed sponsorship. */
async function wallet(url: string, ms: number) {
  const took: number[] = [];
  let succeeded = 0;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const started = performance.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": WALLET },
      body: body("0x1111111111111111111111111111111111111111"),
    });
    const answer = (await response.json()) as { result?: { paymasterAndData?: string } };
    took.push(performance.now() - started);
    if (response.status === 200 && answer.result?.paymasterAndData && answer.result.paymasterAndData !== "0x") {
      succeeded += 1;
    }
    await sleep(Math.max(0, WALLET_GAP_MS - (performance.now() - started)));
  }
  return { count: took.length, succeeded, p50: percentile(took, 50), p99: percentile(took, 99) };
}

async function floodPhase(base: string, dapp: Dapp | undefined, label: string) {
  const url = (d: Dapp) => `${base}/api/v1/${d.chainId}/${d.apiKey}`;
  const target = dapp ?? honest;
  const flood = dapp
    ? autocannon({
        url: url(dapp),
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": FLOODER },
        body: body(),
        connections,
        duration: seconds,
        workers: 1,
      })
    : undefined;
  const measured = await wallet(url(target), seconds * 1000);
  const result = await flood;
  const status = result ? result.statusCodeStats : {};
  const answered = result ? result.requests.total : 0;
  const tooMany = (status as Record<string, { count: number }>)["429"]?.count ?? 0;
  console.log(
    `| ${label} | ${result ? Math.round(answered / seconds).toLocaleString("en") : "–"} | ` +
      `${result ? `${((tooMany / Math.max(1, answered)) * 100).toFixed(1)} %` : "–"} | ${measured.count} | ` +
      `${((measured.succeeded / measured.count) * 100).toFixed(1)} % | ${measured.p50.toFixed(1)} ms | ` +
      `${measured.p99.toFixed(1)} ms |`,
  );
}

/** Service CPU µs per sponsorship, groups of 50 concurrent requests through app.inject. */
async function cpuPerSponsorship(t: TestApp, dapp: Dapp): Promise<number> {
  const one = () =>
    t.app.inject({
      method: "POST",
      url: `/api/v1/${dapp.chainId}/${dapp.apiKey}`,
      headers: { "content-type": "application/json", "x-forwarded-for": WALLET },
      payload: body(),
    });
  const started = process.cpuUsage();
  for (let done = 0; done < requests; done += 50) {
    const replies = await Promise.all(Array.from({ length: 50 }, one));
    const bad = replies.find((reply) => reply.statusCode !== 200);
    if (bad) throw new Error(`sponsorship failed: ${bad.body}`.slice(0, 300));
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / requests;
}

/** The three phases of question 1, one table. */
async function floods(base: string) {
  console.log(`${database}: flood of ${connections} connections for ${seconds} s from one address; the other sends`);
  console.log(`a sponsorship every ${WALLET_GAP_MS} ms (per-address quota: ${QUOTA.limit} requests per second)`);
  console.log(
    "| phase | flood answered/s | flood 429 | wallet requests | wallet sponsored | wallet p50 | wallet p99 |",
  );
  console.log("|---|---|---|---|---|---|---|");
  // Both addresses on one paymaster, as on a dApp's public key: the quota is per address.
  const guarded = await sponsoringDapp(t, QUOTA);
  honest = guarded;
  await floodPhase(base, undefined, "no flood");
  await floodPhase(base, guarded, `flood, quota ${QUOTA.limit}/s per address`);
  const open = await sponsoringDapp(t);
  honest = open;
  await floodPhase(base, open, "flood, no quota");
}

let honest: Dapp;
const database = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";
const t = await startTestApp({ trustProxy: true });
try {
  const base = await t.app.listen({ port: 0, host: "127.0.0.1" });

  if (!values["cpu-only"]) await floods(base);

  const plain = await sponsoringDapp(t);
  const quoted = await sponsoringDapp(t, { limit: 1_000_000, windowSeconds: 86_400 });
  await cpuPerSponsorship(t, plain);
  await cpuPerSponsorship(t, quoted);
  const without: number[] = [];
  const withQuota: number[] = [];
  // ABBA: each arm goes first in every other round, so neither gains from its place (a warm cache, a collection due).
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      without.push(await cpuPerSponsorship(t, plain));
      withQuota.push(await cpuPerSponsorship(t, quoted));
    } else {
      withQuota.push(await cpuPerSponsorship(t, quoted));
      without.push(await cpuPerSponsorship(t, plain));
    }
  }
  console.log(`\nService CPU per sponsorship (${database}, ${rounds} alternated rounds of ${requests}, median):`);
  console.log(`| no quota | one quota | the quota's cost |\n|---|---|---|`);
  const [a, b] = [median(without), median(withQuota)];
  console.log(`| ${a.toFixed(0)} µs | ${b.toFixed(0)} µs | ${(b - a).toFixed(0)} µs |`);

  // What a paymaster without quotas or origins now pays per request: the quota rule's early return and the origin
  // verdict, timed alone.
  const setup = {
    paymasterId: "p",
    accountId: "a",
    chainId: 31337,
    fundingAddress: null,
    policies: [],
    contracts: new Map(),
    webhooks: [],
    origins: { allowed: new Set<string>(), required: false },
  };
  const counter = new MemoryQuotaCounter();
  const client = { ip: WALLET, origin: undefined, sender: SENDER };
  for (let i = 0; i < 100_000; i++) {
    await overQuota(setup, client, 0, counter);
    originVerdict(setup, undefined);
  }
  const loops = 1_000_000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < loops; i++) {
    await overQuota(setup, client, 0, counter);
    originVerdict(setup, undefined);
  }
  const ns = Number(process.hrtime.bigint() - started) / loops;
  console.log(`\nWithout quotas or origins, the new checks cost ${ns.toFixed(0)} ns per request.`);

  // One per-address quota counted in memory (the embedded database's counter), 10,000 client addresses in turn.
  const quota = await sponsoringDapp(t, { limit: 1_000_000, windowSeconds: 86_400 });
  const loaded = await loadSponsorshipSetup(t.db, quota.apiKey);
  if (!loaded) throw new Error("no setup");
  const memory = new MemoryQuotaCounter();
  const address = (i: number) => ({ ...client, ip: `10.0.${(i >> 8) & 255}.${i & 255}` });
  for (let i = 0; i < 100_000; i++) await overQuota(loaded, address(i % 10_000), 0, memory);
  const countedFrom = process.hrtime.bigint();
  for (let i = 0; i < loops; i++) await overQuota(loaded, address(i % 10_000), 0, memory);
  const countedNs = Number(process.hrtime.bigint() - countedFrom) / loops;
  console.log(`One quota counted in memory (10,000 addresses): ${countedNs.toFixed(0)} ns per request.`);
} finally {
  await t.close();
}
