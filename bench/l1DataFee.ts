// Benchmark: what pricing the L1 data fee adds to a sponsorship the service estimates, A/B in one run on one chain:
// anvil in OP mode with Base's chain id and Fjord's GasPriceOracle (test/helpers/l2Chains.ts), two services in this
// process, one reading the L1 fee (the chain id's op-stack model) and one told the chain has none. Each sponsorship
// is a fresh account's first v0.6 operation in Biconomy's form with calculateGasLimits (the simulation, the fees and,
// for A, the L1 reading, all through the node), through Fastify's inject into the real RPC route. Scenarios run in
// interleaved blocks. Then the L1 part the service signs for typical operations at the chain's fees.
//   npx tsx bench/l1DataFee.ts [--requests N] [--rounds N]
// Figures: wall time per sponsorship (one at a time: its latency), CPU of this process per sponsorship (the service
// and the harness; anvil is a process of its own).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { type Hex, parseAbi, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { encodeVerifyingPaymasterDataV07 } from "../src/bindings/paymasters/paymasterAndDataV07";
import { sponsoringChains } from "../src/chain/sponsoringChains";
import { readChains } from "../src/config";
import { DUMMY_SIGNATURE, stubPaymasterAndData } from "../src/gasEstimation/gasEstimationStub";
import { l1DataGasOf, startL1FeeReading } from "../src/gasEstimation/l1DataGas";
import { createSigner } from "../src/signer/signer";
import { anvilKeys, newAccountOperation } from "../test/contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "../test/helpers/app";
import { INFINITISM, TARGET } from "../test/helpers/chainApp";
import { fundedDapp } from "../test/helpers/dappSetup";
import { DEFAULT_OP_STACK_FEES, deployPaymasterStacks, startOpStackChain } from "../test/helpers/l2Chains";
import { sentFieldsV06 } from "../test/helpers/userOps";
import { interleaved, printTotals } from "./interleaved";

const { values } = parseArgs({
  options: { requests: { type: "string", default: "40" }, rounds: { type: "string", default: "5" } },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const CHAIN_ID = 8453;

const serviceKey = generatePrivateKey();
const chain = await startOpStackChain({ chainId: CHAIN_ID });
const apps: TestApp[] = [];
try {
  const stacks = await deployPaymasterStacks(chain, privateKeyToAccount(serviceKey).address);
  const hash = await chain.wallet(anvilKeys.fundingWallet).writeContract({
    address: stacks.v06.verifyingPaymaster,
    abi: parseAbi(["function depositFor(address paymasterId) payable"]),
    functionName: "depositFor",
    args: [privateKeyToAccount(anvilKeys.fundingWallet).address],
    value: parseEther("10"),
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
  const folder = mkdtempSync(path.join(tmpdir(), "bench-l1-"));
  const service = async (extra: Record<string, unknown>) => {
    const file = path.join(folder, `chains-${apps.length}.json`);
    const entry = { chainId: CHAIN_ID, name: "Base (anvil)", rpcUrl: chain.anvil.rpcUrl };
    writeFileSync(file, JSON.stringify([{ ...entry, verifyingPaymaster: stacks.v06.verifyingPaymaster, ...extra }]));
    const t = await startTestApp({ signer: createSigner(serviceKey), chains: readChains(file) });
    apps.push(t);
    const dapp = await fundedDapp(t, {
      dapp: { chainId: CHAIN_ID },
      fundingKey: anvilKeys.fundingWallet,
      walletDeployment: true,
      contract: { address: TARGET },
    });
    return { t, dapp };
  };
  const scenarios: Record<string, { t: TestApp; dapp: Dapp }> = {
    "with the L1 fee (op-stack)": await service({}),
    "without (l1DataFee none)": await service({ l1DataFee: "none" }),
  };
  // Fresh accounts' first operations, made before the clock runs (each reads its address from the factory).
  const operations = async (count: number) =>
    Promise.all(
      Array.from({ length: count }, async () =>
        sentFieldsV06((await newAccountOperation(chain, { to: TARGET, value: 0n })).op, [
          "sender",
          "nonce",
          "initCode",
          "callData",
        ]),
      ),
    );
  const sponsor = async (app: { t: TestApp; dapp: Dapp }, op: Record<string, unknown>) => {
    const reply = await app.t.app.inject({
      method: "POST",
      url: `/api/v1/${CHAIN_ID}/${app.dapp.apiKey}`,
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "pm_sponsorUserOperation",
        params: [
          op,
          { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: INFINITISM } },
        ],
      }),
    });
    const body = reply.json() as { result?: { paymasterAndData: Hex; preVerificationGas: string } };
    if (!body.result || body.result.paymasterAndData === "0x") throw new Error(reply.body);
    return body.result;
  };
  const totals = await interleaved(
    Object.keys(scenarios),
    async (name, count) => {
      const app = scenarios[name] as { t: TestApp; dapp: Dapp };
      const ops = await operations(count);
      return async () => {
        for (const op of ops) await sponsor(app, op);
      };
    },
    { rounds: ROUNDS, count: REQUESTS, warmUp: 10 },
  );
  console.log(`${ROUNDS} rounds × ${REQUESTS} sponsorships per scenario, one at a time, PGlite, anvil in OP mode`);
  printTotals(totals, "sponsorship");

  // The L1 part signed for a typical first operation, at the chain's fees, as the ledger recorded it.
  const priced = scenarios["with the L1 fee (op-stack)"] as { t: TestApp; dapp: Dapp };
  const reply = await priced.t.call("GET", "sponsorships", { token: priced.dapp.token, apiKey: priced.dapp.apiKey });
  const rows = reply.body.data as { l1DataGas: string | null }[];
  const parts = rows.map((row) => Number(row.l1DataGas)).sort((a, b) => a - b);
  const block0 = await chain.publicClient.getBlock();
  const fees = DEFAULT_OP_STACK_FEES;
  console.log(
    `L1 part of a v0.6 first operation at L1 base fee ${fees.l1BaseFee} wei, blob base fee ${fees.blobBaseFee} wei, ` +
      `scalars ${fees.baseFeeScalar}/${fees.blobBaseFeeScalar}, L2 base fee ${block0.baseFeePerGas} wei: ` +
      `median ${parts[Math.floor(parts.length / 2)]} gas (${parts[0]} to ${parts[parts.length - 1]})`,
  );

  // The L1 part of first and later operations of both shapes, read as the service reads it, at two tips.
  const [sponsoring] = sponsoringChains(readChains(path.join(folder, "chains-0.json"))).values();
  if (!sponsoring) throw new Error("no chain");
  const { op: first } = await newAccountOperation(chain, { to: TARGET, value: 0n });
  const window = { paymasterId: privateKeyToAccount(anvilKeys.fundingWallet).address, validUntil: 2e9, validAfter: 0 };
  const v06First = {
    ...first,
    paymasterAndData: stubPaymasterAndData({ paymaster: stacks.v06.verifyingPaymaster, ...window }),
    signature: DUMMY_SIGNATURE,
  };
  const v07First = {
    sender: first.sender,
    nonce: 0n,
    factory: stacks.later["0.7"].simpleAccountFactory,
    factoryData: `0x${first.initCode.slice(42)}` as Hex,
    callData: first.callData,
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    paymaster: stacks.later["0.7"].verifyingPaymaster,
    paymasterVerificationGasLimit: 36_000n,
    paymasterPostOpGasLimit: 6_000n,
    paymasterData: encodeVerifyingPaymasterDataV07({ ...window, signature: DUMMY_SIGNATURE }),
    signature: DUMMY_SIGNATURE,
  };
  const { factory: _, factoryData: __, ...v07Later } = v07First;
  const shapes = {
    "v0.6 first": [v06First, stacks.v06.entryPoint],
    "v0.6 later": [{ ...v06First, nonce: 1n, initCode: "0x" as Hex }, stacks.v06.entryPoint],
    "v0.7 first": [v07First, stacks.later["0.7"].entryPoint],
    "v0.7 later": [{ ...v07Later, nonce: 1n }, stacks.later["0.7"].entryPoint],
  } as const;
  const baseFee = (await chain.publicClient.getBlock()).baseFeePerGas ?? 0n;
  for (const tip of [1_000_000_000n, 1_000_000n]) {
    const line: string[] = [];
    for (const [name, [op, entryPoint]] of Object.entries(shapes)) {
      // The bench runs outside any service context: the wall clock keeps the operator fee's cache.
      const pending = startL1FeeReading(sponsoring, entryPoint, op, Date.now());
      if (!pending) throw new Error("the chain's model reads no L1 fee");
      const gas = l1DataGasOf(
        pending.model,
        await pending.reading,
        { maxFeePerGas: 2n * baseFee + tip, maxPriorityFeePerGas: tip },
        0n,
      );
      line.push(`${name} ${gas}`);
    }
    console.log(`L1 part in gas at a tip of ${tip} wei over the base fee ${baseFee}: ${line.join(", ")}`);
  }
} finally {
  for (const t of apps) await t.close();
  await chain.anvil.stop();
}
