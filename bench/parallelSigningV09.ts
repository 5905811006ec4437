// Benchmark: what one EntryPoint v0.9 sponsorship costs the service when signed in parallel (pm_getPaymasterData with
// signingPhase "commit", then "finalize" with the operation the account signed: two requests, a stored commitment)
// against one signed sequentially (one pm_getPaymasterData), in one process through Fastify's inject into the real
// RPC route: the rules, the signature, the record on PGlite. Scenarios run in interleaved blocks, A/B in the same run.
//   npx tsx bench/parallelSigningV09.ts [--requests N] [--rounds N] [--lanes N]
// Figures: CPU time per sponsorship (this process, user + system) and wall time per sponsorship. With --lanes 1 the
// wall time is one sponsorship's latency; with more lanes, sponsorships overlap as under load.
import { parseArgs } from "node:util";
import { encodeFunctionData, parseAbi } from "viem";
import { ENTRY_POINT_V09_ADDRESS } from "../src/bindings/entryPoints/entryPointV09";
import { startTestApp } from "../test/helpers/app";
import { linkFundingWallet, whitelist } from "../test/helpers/dappSetup";
import { interleaved, printTotals } from "./interleaved";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "300" },
    rounds: { type: "string", default: "5" },
    lanes: { type: "string", default: "1" },
  },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const LANES = Number(values.lanes);

const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const callData = encodeFunctionData({
  abi: parseAbi(["function execute(address dest, uint256 value, bytes func)"]),
  functionName: "execute",
  args: [TARGET, 0n, encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [1n] })],
});
const gas = {
  callGasLimit: "0x1a930",
  verificationGasLimit: "0xdf21",
  preVerificationGas: "0x1267c",
  maxFeePerGas: "0xc02244",
  maxPriorityFeePerGas: "0xf4240",
};
/** Any 65 bytes: the service never checks the account's signature, and the hash leaves it out. */
const ACCOUNT_SIGNATURE = `0x${"ab".repeat(64)}1b`;

let counter = 0;
const operation = () => ({
  sender: `0x${(++counter).toString(16).padStart(40, "0")}`,
  nonce: "0x0",
  callData,
  ...gas,
  signature: "0x",
});

const t = await startTestApp();
try {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await whitelist(t, dapp, TARGET, targetAbi, ["mint"]);
  const url = `/api/v1/31337/${dapp.apiKey}`;
  const call = async (params: unknown[]): Promise<Record<string, string>> => {
    const reply = await t.app.inject({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "pm_getPaymasterData", params }),
    });
    const body = reply.json() as { result?: Record<string, string>; error?: unknown };
    if (!body.result) throw new Error(reply.body);
    return body.result;
  };
  const scenarios: Record<string, () => Promise<void>> = {
    "v0.9 sequential (1 request)": async () => {
      await call([operation(), ENTRY_POINT_V09_ADDRESS, "0x7a69", {}]);
    },
    "v0.9 parallel (commit + finalize)": async () => {
      const op = operation();
      const fields = await call([op, ENTRY_POINT_V09_ADDRESS, "0x7a69", { signingPhase: "commit" }]);
      const { paymasterSignature: _placeholder, ...ours } = fields;
      const signed = { ...op, ...ours, signature: ACCOUNT_SIGNATURE };
      const final = await call([signed, ENTRY_POINT_V09_ADDRESS, "0x7a69", { signingPhase: "finalize" }]);
      if (final.paymasterSignature === fields.paymasterSignature) throw new Error("finalize gave the placeholder");
    },
  };
  const totals = await interleaved(
    Object.keys(scenarios),
    async (name, count) => {
      const run = scenarios[name] as () => Promise<void>;
      return async () => {
        await Promise.all(
          Array.from({ length: LANES }, async (_, lane) => {
            for (let i = lane; i < count; i += LANES) await run();
          }),
        );
      };
    },
    { rounds: ROUNDS, count: REQUESTS, warmUp: 100 },
  );
  console.log(`${ROUNDS} rounds × ${REQUESTS} sponsorships per scenario, ${LANES} in flight, PGlite`);
  printTotals(totals, "sponsorship");
} finally {
  await t.close();
}
