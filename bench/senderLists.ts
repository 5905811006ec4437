// Benchmark: a SENDER_BLOCKLIST of 1 address against one of 100,000, in process through the management API and the
// RPC endpoint (app.inject, so no network): what creating and replacing the list costs, what loading the paymaster's
// setup again costs (once per change of it), what the rule costs per request, and a whole sponsorship.
//   npx tsx bench/senderLists.ts                   on PGlite
//   DATABASE_URL=postgres://… npx tsx bench/senderLists.ts     on PostgreSQL (a schema of its own, dropped after)
//   options: --sizes 1,100000 (the list lengths), --checks N (rule evaluations timed, default 1000000), --requests N
//   (sponsorships timed, default 300), --rounds N (creations and loads timed, default 5; the median is shown)
import { parseArgs } from "node:util";
import { ENTRY_POINT_V06_ADDRESS } from "../src/bindings/entryPoints/entryPoint";
import { loadSponsorshipSetup } from "../src/sponsorship/loadSetup";
import { senderLists } from "../src/sponsorship/rules/senderLists";
import { startTestApp, type TestApp } from "../test/helpers/app";
import { linkFundingWallet, rpc } from "../test/helpers/dappSetup";
import { userOpV06 } from "../test/helpers/userOps";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1,100000" },
    checks: { type: "string", default: "1000000" },
    requests: { type: "string", default: "300" },
    rounds: { type: "string", default: "5" },
  },
});
const sizes = values.sizes.split(",").map(Number);
const checks = Number(values.checks);
const requests = Number(values.requests);
const rounds = Number(values.rounds);

const address = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
const OFF_LIST = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (from: number) => performance.now() - from;

/** CPU ms of this process (the app, and PGlite when it is the database) since `from`. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};

async function timed(what: () => Promise<{ status: number }>, cpu?: number[]): Promise<number> {
  const started = performance.now();
  const startedCpu = process.cpuUsage();
  const reply = await what();
  const took = ms(started);
  cpu?.push(cpuMs(startedCpu));
  if (reply.status !== 200) throw new Error(`request failed: ${JSON.stringify(reply)}`.slice(0, 500));
  return took;
}

async function measure(t: TestApp, size: number) {
  const addresses = Array.from({ length: size }, (_, i) => address(i + 1));
  const bodyBytes = JSON.stringify({ name: "x", policyType: "SENDER_BLOCKLIST", policyData: { addresses } }).length;
  const created: number[] = [];
  const createdCpu: number[] = [];
  const replaced: number[] = [];
  const loads: number[] = [];
  const loadsCpu: number[] = [];
  let dapp = await t.dapp();
  let policyId = "";
  for (let round = 0; round < rounds; round++) {
    dapp = await t.dapp();
    const auth = { token: dapp.token, apiKey: dapp.apiKey };
    created.push(
      await timed(async () => {
        const reply = await t.call("POST", "paymaster-policy", {
          ...auth,
          body: { name: "blocked", policyType: "SENDER_BLOCKLIST", policyData: { addresses } },
        });
        policyId = (reply.body.data as { _id: string })._id;
        return reply;
      }, createdCpu),
    );
    replaced.push(
      await timed(() =>
        t.call("PATCH", `paymaster-policy/${policyId}`, { ...auth, body: { policyData: { addresses } } }),
      ),
    );
    const started = performance.now();
    const startedCpu = process.cpuUsage();
    const setup = await loadSponsorshipSetup(t.db, dapp.apiKey);
    loads.push(ms(started));
    loadsCpu.push(cpuMs(startedCpu));
    if (!setup) throw new Error("no setup");
  }

  // The rule alone, on a loaded setup: a sender on the list (the last one) and one off it.
  const setup = await loadSponsorshipSetup(t.db, dapp.apiKey);
  if (!setup) throw new Error("no setup");
  const perCheck = (sender: string) => {
    const input = { setup, userOp: { sender, nonce: 0n, initCode: "0x", callData: "0x" }, nowMs: 0, validUntil: 0 };
    // biome-ignore lint/suspicious/noExplicitAny: the bench builds the rule input by hand
    const evaluate = () => senderLists.evaluate(input as any);
    for (let i = 0; i < 10_000; i++) evaluate();
    const started = process.hrtime.bigint();
    for (let i = 0; i < checks; i++) evaluate();
    return Number(process.hrtime.bigint() - started) / checks;
  };
  const hitNs = perCheck(address(size));
  const missNs = perCheck(OFF_LIST);

  // A whole sponsorship through the RPC endpoint: the cached setup, the rules, the signature and the record.
  await linkFundingWallet(t, dapp);
  await t.call("POST", "paymaster-policy", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { name: "deploy", policyType: "WALLET_DEPLOYMENT", policyData: {} },
  });
  const op = (nonce: number) => userOpV06(OFF_LIST, nonce);
  const sponsor = (nonce: number) =>
    rpc(t, dapp, "pm_getPaymasterData", [op(nonce), ENTRY_POINT_V06_ADDRESS, "0x7a69", {}]);
  for (let i = 0; i < 20; i++) await sponsor(i);
  const took: number[] = [];
  for (let i = 0; i < requests; i++) took.push(await timed(() => sponsor(1000 + i)));
  return { size, bodyBytes, created, createdCpu, replaced, loads, loadsCpu, hitNs, missNs, sponsorMs: median(took) };
}

const t = await startTestApp({ bodyLimitBytes: 512 * 1024 });
try {
  const database = process.env.DATABASE_URL ? "PostgreSQL" : "PGlite";
  console.log(`${database}, ${rounds} rounds (median), ${checks} rule checks, ${requests} sponsorships per size`);
  console.log(
    "| addresses | body | create [CPU] | replace (PATCH) | setup load [CPU] | rule: on list | rule: off list | sponsorship |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const size of sizes) {
    const r = await measure(t, size);
    console.log(
      `| ${size.toLocaleString("en")} | ${(r.bodyBytes / 1e6).toFixed(2)} MB | ${median(r.created).toFixed(0)} ms ` +
        `[${median(r.createdCpu).toFixed(0)}] | ${median(r.replaced).toFixed(0)} ms | ${median(r.loads).toFixed(0)} ms ` +
        `[${median(r.loadsCpu).toFixed(0)}] | ${r.hitNs.toFixed(0)} ns | ` +
        `${r.missNs.toFixed(0)} ns | ${r.sponsorMs.toFixed(2)} ms |`,
    );
  }
} finally {
  await t.close();
}
