// Benchmark: the CPU one sponsorship costs the service, per EntryPoint version, in one process (no HTTP sockets, no
// load generator competing for the cores): each request goes through Fastify's inject into the real RPC route, the
// rules (funding, wallet deployment, whitelist over the decoded call), the signature and the record on PGlite.
// Scenarios run in interleaved blocks so that drift of the machine spreads over all of them.
//   npx tsx bench/sponsorPathV07.ts [--requests N] [--rounds N]
//
// It answers "is the v0.7 sponsor path as cheap as v0.6's": v0.6 pm_getPaymasterData and pm_sponsorUserOperation
// beside v0.7 and v0.8 pm_getPaymasterData and v0.7 pm_sponsorUserOperation (gas as sent, no bundler).
import { parseArgs } from "node:util";
import { encodeFunctionData, parseAbi } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../src/bindings/entryPoints/entryPointV07";
import { startTestApp } from "../test/helpers/app";
import { linkFundingWallet, whitelist } from "../test/helpers/dappSetup";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "400" }, rounds: { type: "string", default: "5" } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);

const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const mint = encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [1n] });
/** SimpleAccount's execute, the same selector in 0.6, 0.7 and 0.8: the same whitelist work for every version. */
const callData = encodeFunctionData({
  abi: parseAbi(["function execute(address dest, uint256 value, bytes func)"]),
  functionName: "execute",
  args: [TARGET, 0n, mint],
});
const gas = {
  callGasLimit: "0x1a930",
  verificationGasLimit: "0xdf21",
  preVerificationGas: "0x1267c",
  maxFeePerGas: "0xc02244",
  maxPriorityFeePerGas: "0xf4240",
  signature: "0x",
};

let counter = 0;
/** Every request a new sender and nonce, as a wallet's. */
const sender = () => `0x${(++counter).toString(16).padStart(40, "0")}`;
const v06 = () => ({ sender: sender(), nonce: "0x0", initCode: "0x", callData, ...gas });
const v07 = () => ({ sender: sender(), nonce: "0x0", callData, ...gas });

const SCENARIOS: Record<string, () => { method: string; params: unknown[] }> = {
  "v0.6 pm_getPaymasterData": () => ({
    method: "pm_getPaymasterData",
    params: [v06(), ENTRY_POINT_V06_ADDRESS, "0x7a69", {}],
  }),
  "v0.7 pm_getPaymasterData": () => ({
    method: "pm_getPaymasterData",
    params: [v07(), ENTRY_POINT_V07_ADDRESS, "0x7a69", {}],
  }),
  "v0.8 pm_getPaymasterData": () => ({
    method: "pm_getPaymasterData",
    params: [v07(), ENTRY_POINT_V08_ADDRESS, "0x7a69", {}],
  }),
  "v0.6 pm_sponsorUserOperation": () => ({
    method: "pm_sponsorUserOperation",
    params: [v06(), ENTRY_POINT_V06_ADDRESS, {}],
  }),
  "v0.7 pm_sponsorUserOperation": () => ({
    method: "pm_sponsorUserOperation",
    params: [v07(), ENTRY_POINT_V07_ADDRESS, {}],
  }),
};

const t = await startTestApp();
try {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await whitelist(t, dapp, TARGET, targetAbi, ["mint"]);
  const url = `/api/v1/31337/${dapp.apiKey}`;

  const once = async (scenario: string) => {
    const { method, params } = (SCENARIOS[scenario] as () => { method: string; params: unknown[] })();
    const reply = await t.app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = reply.json() as { error?: unknown };
    if (reply.statusCode !== 200 || body.error) throw new Error(`${scenario}: ${reply.body}`);
  };
  /** Requests in flight together: the recorder's group commit is part of the path, as under load. */
  const block = async (scenario: string, count: number) => {
    const started = process.cpuUsage();
    const wall = performance.now();
    const lanes = 20;
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        for (let i = lane; i < count; i += lanes) await once(scenario);
      }),
    );
    const cpu = process.cpuUsage(started);
    return { cpuMicros: cpu.user + cpu.system, wallMs: performance.now() - wall };
  };

  for (const scenario of Object.keys(SCENARIOS)) await block(scenario, 200); // warm-up: JIT, caches
  const totals = new Map<string, { cpuMicros: number; wallMs: number; requests: number }>();
  const names = Object.keys(SCENARIOS);
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another scenario, so none always runs first or last.
    for (const scenario of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
      const { cpuMicros, wallMs } = await block(scenario, REQUESTS);
      const total = totals.get(scenario) ?? { cpuMicros: 0, wallMs: 0, requests: 0 };
      totals.set(scenario, {
        cpuMicros: total.cpuMicros + cpuMicros,
        wallMs: total.wallMs + wallMs,
        requests: total.requests + REQUESTS,
      });
    }
  }
  const base = totals.get("v0.6 pm_getPaymasterData");
  console.log(`${ROUNDS} rounds × ${REQUESTS} requests per scenario, 20 in flight, PGlite`);
  for (const [scenario, total] of totals) {
    const perCall = total.cpuMicros / total.requests;
    const vsBase = base ? ` (${((perCall / (base.cpuMicros / base.requests) - 1) * 100).toFixed(1)} % vs v0.6)` : "";
    console.log(
      `${scenario.padEnd(30)} ${perCall.toFixed(0).padStart(6)} µs CPU/call${vsBase}, ` +
        `${((total.requests / total.wallMs) * 1000).toFixed(0)} req/s`,
    );
  }
} finally {
  await t.close();
}
