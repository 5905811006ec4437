// The L1 data fee on Arbitrum, through a real bundler's check: anvil with Arbitrum One's chain id (42161) and our
// NodeInterface stand-in at 0x…C8 answering gasEstimateL1Component, and Alto in `--chain-type arbitrum`, which refuses
// at eth_sendUserOperation an operation whose preVerificationGas is below its execution part plus 95 % of that L1 gas.
// With no bundler configured for the service, a v0.7 operation it estimates and signs (Pimlico's form) is accepted by
// Alto and mined; the same operation priced without the L1 part (the chains file saying "none") is refused.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, type Hex, parseAbi, parseEther } from "viem";
import { formatUserOperationRequest, type UserOperation } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { anvilKeys } from "../contracts/fixtures";
import { type Alto, startAlto } from "../helpers/alto";
import type { Dapp, TestApp } from "../helpers/app";
import { TARGET } from "../helpers/chainApp";
import { appFromChainsEntry, sponsoringDapp } from "../helpers/chainsFileApp";
import { rpc } from "../helpers/dappSetup";
import { freshOperationV07 } from "../helpers/freshOperationV07";
import {
  type ArbitrumChain,
  deployPaymasterStacks,
  type PaymasterStacks,
  startArbitrumChain,
} from "../helpers/l2Chains";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { withAnsweredFieldsV07 } from "../helpers/userOps";

const CHAIN_ID = 42161;
const serviceKey = generatePrivateKey();
const depositForAbi = parseAbi(["function depositFor(address paymasterId) payable"]);

let chain: ArbitrumChain;
let stacks: PaymasterStacks;
let alto: Alto;
let priced: { t: TestApp; dapp: Dapp };
let unaware: { t: TestApp; dapp: Dapp };

async function service(extra: Record<string, unknown>) {
  const entryPoints = { "0.7": { verifyingPaymaster: stacks.later["0.7"].verifyingPaymaster } };
  const entry = { chainId: CHAIN_ID, name: "Arbitrum One (anvil)", rpcUrl: chain.anvil.rpcUrl, entryPoints, ...extra };
  const t = await appFromChainsEntry(entry, serviceKey);
  return { t, dapp: await sponsoringDapp(t, CHAIN_ID) };
}

before(async () => {
  chain = await startArbitrumChain({ chainId: CHAIN_ID });
  stacks = await deployPaymasterStacks(chain, privateKeyToAccount(serviceKey).address);
  const hash = await chain.wallet(anvilKeys.fundingWallet).writeContract({
    address: stacks.later["0.7"].verifyingPaymaster,
    abi: depositForAbi,
    functionName: "depositFor",
    args: [privateKeyToAccount(anvilKeys.fundingWallet).address],
    value: parseEther("1"),
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });
  [alto, priced, unaware] = await Promise.all([
    startAlto({
      rpcUrl: chain.anvil.rpcUrl,
      executorKey: anvilKeys.bundler,
      utilityKey: anvilKeys.stranger,
      apiVersions: ["v2", "v1"],
      entryPoints: [stacks.later["0.7"].entryPoint],
      chainType: "arbitrum",
    }),
    service({}),
    service({ l1DataFee: "none" }),
  ]);
});

after(async () => {
  try {
    await alto?.stop();
    await priced?.t.close();
    await unaware?.t.close();
  } finally {
    await chain?.anvil.stop();
  }
});

async function bundler(method: string, params: unknown[]) {
  return (await postJsonRpc(alto.url, method, params)).body;
}

/** A fresh v0.7 SimpleAccount's first operation, sponsored by `app` with the gas left out, signed by its owner. */
async function sponsoredOperation(app: { t: TestApp; dapp: Dapp }) {
  const stack = stacks.later["0.7"];
  const { account, op } = await freshOperationV07(chain.publicClient, "0.7", stack, {
    calls: [{ to: TARGET as Address, value: 0n }],
  });
  const reply = await rpc(app.t, app.dapp, "pm_sponsorUserOperation", [
    formatUserOperationRequest(op as UserOperation),
    stack.entryPoint,
    { calculateGasLimits: true },
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result as Record<string, Hex>;
  const full: UserOperation<"0.7"> = withAnsweredFieldsV07(op, result);
  return { ...full, signature: await account.signUserOperation(full) };
}

async function receiptOf(hash: Hex) {
  for (let tries = 0; tries < 300; tries++) {
    const { result } = await bundler("eth_getUserOperationReceipt", [hash]);
    if (result) return result as { success: boolean };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`no receipt for ${hash}: ${alto.output().slice(-2_000)}`);
}

test("Alto in arbitrum mode accepts the service's v0.7 operation with the L1 part, and it is mined", async (t) => {
  const op = await sponsoredOperation(priced);
  const l1 = await chain.gasEstimateL1Component(stacks.later["0.7"].entryPoint, "0x");
  t.diagnostic(
    `v0.7 first operation: preVerificationGas ${op.preVerificationGas} (stand-in's L1 gas for an empty call ${l1.gasEstimateForL1})`,
  );
  const sent = await bundler("eth_sendUserOperation", [formatUserOperationRequest(op), stacks.later["0.7"].entryPoint]);
  assert.ok(typeof sent.result === "string", JSON.stringify(sent));
  const receipt = await receiptOf(sent.result as Hex);
  assert.equal(receipt.success, true);
  const ledger = await priced.t.call("GET", "sponsorships", { token: priced.dapp.token, apiKey: priced.dapp.apiKey });
  const row = (ledger.body.data as { sender: string; l1DataGas: string | null }[]).find(
    (entry) => entry.sender === op.sender.toLowerCase(),
  );
  assert.ok(row?.l1DataGas && BigInt(row.l1DataGas) > 40_000n, JSON.stringify(row));
  t.diagnostic(`the L1 part signed: ${row.l1DataGas} gas`);
});

test("the same operation priced without the L1 part is refused by Alto's check", async () => {
  const op = await sponsoredOperation(unaware);
  const sent = await bundler("eth_sendUserOperation", [formatUserOperationRequest(op), stacks.later["0.7"].entryPoint]);
  assert.equal(sent.result, undefined, JSON.stringify(sent));
  assert.match(sent.error?.message ?? "", /preVerificationGas is not enough, required: \d+, got: \d+/);
});
