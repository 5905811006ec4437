// Benchmark: the service's CPU per ERC20-mode sponsorship on EntryPoint v0.7 with a permit (the up-front token
// paymaster: the allowance, the token's nonce and domain read, the permit's signature verified through the node, the
// ledger asked for an outstanding permit) against without one (the approve-in-batch token paymaster: the price and the
// balance read, and the allowance to the up-front paymaster found short), A/B in alternating rounds in one run. Both
// are pm_getPaymasterData with the gas sent (no estimate), through Fastify's inject into the real RPC route, signed
// and recorded on PGlite, against the local chain (anvil, its own process: its CPU is not counted). Every request has
// a sender of its own, holding TUSDC, whose permit (an EOA's, one per sender: a sender's second permit would wait for
// its first) is signed before the timed block.
//   npx tsx bench/permitToken.ts [--requests N] [--rounds N]
import { parseArgs } from "node:util";
import { type Address, encodeFunctionData, maxUint256, numberToHex, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { permitTypedData } from "../src/bindings/paymasters/permitTypedData";
import { LOCAL_ENTRY_POINT_STACKS } from "../src/chain/localAddresses";
import { LOCAL_TOKENS } from "../src/devChain/localTokens";
import { LOCAL_PERMIT_TOKEN, LOCAL_PERMIT_TOKEN_ADDRESS, mintTestTokens } from "../src/devChain/tokenDeployment";
import { anvilKeys } from "../test/contracts/fixtures";
import { startLocalStacks } from "../test/contracts/v07/localStacks";
import { startTestApp } from "../test/helpers/app";
import { interleaved } from "./interleaved";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "100" }, rounds: { type: "string", default: "5" } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const WARM_UP = 20;
/** Requests in flight together: the recorder's group commit is part of the path, as under load. */
const LANES = 10;

const stack = LOCAL_ENTRY_POINT_STACKS["0.7"];
const callData = encodeFunctionData({
  abi: parseAbi(["function execute(address dest, uint256 value, bytes func)"]),
  functionName: "execute",
  args: ["0x1111111111111111111111111111111111111111", 0n, "0x"],
});
const gas = {
  callGasLimit: "0x1a930",
  verificationGasLimit: "0xdf21",
  preVerificationGas: "0x1267c",
  maxFeePerGas: "0x3b9aca00",
  maxPriorityFeePerGas: "0xf4240",
  signature: "0x",
};
/** What each sender holds, and what its permit allows the up-front paymaster: far above any charge here. */
const MINTED = 100_000_000n;

const env = await startLocalStacks();
const t = await startTestApp({
  signer: env.serviceSigner,
  chains: new Map([[31337, { chainId: 31337, name: "local", rpcUrl: env.chain.rpcUrl, tokens: [...LOCAL_TOKENS] }]]),
});
try {
  const dapp = await t.dapp();
  const url = `/api/v1/31337/${dapp.apiKey}`;
  const minter = { publicClient: env.publicClient, walletClient: env.wallet(anvilKeys.owner) };
  const domain = {
    name: LOCAL_PERMIT_TOKEN.name,
    version: LOCAL_PERMIT_TOKEN.version,
    chainId: 31337,
    verifyingContract: LOCAL_PERMIT_TOKEN_ADDRESS,
  } as const;
  // The service reads the domain from the chain; the bench signs with the same one, written out.

  /** A new sender holding TUSDC, and the request for it: with its permit signed now, or without one. */
  const prepare = async (withPermit: boolean) => {
    const owner = privateKeyToAccount(generatePrivateKey());
    await mintTestTokens(minter, owner.address, MINTED, LOCAL_PERMIT_TOKEN_ADDRESS);
    const op = { sender: owner.address, nonce: "0x0", callData, ...gas };
    let context: Record<string, unknown> = { token: LOCAL_PERMIT_TOKEN_ADDRESS };
    if (withPermit) {
      const typed = permitTypedData(domain, {
        owner: owner.address,
        spender: stack.permitTokenPaymaster as Address,
        value: MINTED,
        nonce: 0n,
      });
      const signature = await owner.signTypedData(typed);
      context = { ...context, permit: { value: numberToHex(MINTED), deadline: numberToHex(maxUint256), signature } };
    }
    return JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "pm_getPaymasterData",
      params: [op, stack.entryPoint, "0x7a69", context],
    });
  };
  const expected = (withPermit: boolean) =>
    (withPermit ? stack.permitTokenPaymaster : stack.tokenPaymaster).toLowerCase();

  const totals = await interleaved(
    ["without a permit (approve in batch)", "with a permit (up front)"],
    async (name, count) => {
      const withPermit = name.startsWith("with a permit");
      const payloads: string[] = [];
      for (let i = 0; i < count; i++) payloads.push(await prepare(withPermit));
      return async () => {
        await Promise.all(
          Array.from({ length: LANES }, async (_, lane) => {
            for (let i = lane; i < payloads.length; i += LANES) {
              const reply = await t.app.inject({
                method: "POST",
                url,
                headers: { "content-type": "application/json" },
                payload: payloads[i],
              });
              const body = reply.json() as { result?: { paymaster: string }; error?: unknown };
              if (body.result?.paymaster.toLowerCase() !== expected(withPermit)) {
                throw new Error(`${name}: ${reply.body}`);
              }
            }
          }),
        );
      };
    },
    { rounds: ROUNDS, count: REQUESTS, warmUp: WARM_UP },
  );
  console.log(`${ROUNDS} rounds × ${REQUESTS} requests per arm, ${LANES} in flight, PGlite, anvil's CPU not counted`);
  const perCall = (name: string) => {
    const total = totals.get(name);
    return total ? total.cpuMicros / total.count : Number.NaN;
  };
  const base = perCall("without a permit (approve in batch)");
  for (const [name, total] of totals) {
    const cpu = total.cpuMicros / total.count;
    console.log(
      `${name.padEnd(36)} ${cpu.toFixed(0).padStart(6)} µs CPU/call (${((cpu / base - 1) * 100).toFixed(1)} % vs ` +
        `without), ${((total.count / total.wallMs) * 1000).toFixed(0)} req/s`,
    );
  }
} finally {
  await t.close();
  await env.stop();
}
