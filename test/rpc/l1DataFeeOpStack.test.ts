// The L1 data fee on an OP-stack chain, through the service: anvil in OP mode with Base's chain id (8453, whose model
// the chains file need not name) and Fjord's GasPriceOracle charges every transaction's sender the L1 fee of its bytes.
// With no bundler configured, the service estimates a v0.6 operation (Biconomy's form, calculateGasLimits) and a v0.7
// one (Pimlico's form), signs them, and each, submitted alone with handleOps at its own fees, leaves the submitter no
// poorer: it paid the gas and the L1 fee, and the EntryPoint paid it back. The same operation priced without the L1
// part (the chains file saying "none") costs the submitter about the L1 fee. With the oracle gone, nothing is signed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Address, encodeFunctionData, type Hex, parseAbi, parseEther, parseEventLogs } from "viem";
import {
  formatUserOperationRequest,
  toPackedUserOperation,
  type UserOperation as ViemOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { anvilKeys, newAccountOperation, signByAccount } from "../contracts/fixtures";
import type { Dapp, TestApp } from "../helpers/app";
import { INFINITISM, TARGET } from "../helpers/chainApp";
import { appFromChainsEntry, sponsoringDapp } from "../helpers/chainsFileApp";
import { rpc } from "../helpers/dappSetup";
import { freshOperationV07 } from "../helpers/freshOperationV07";
import { deployPaymasterStacks, type OpStackChain, type PaymasterStacks, startOpStackChain } from "../helpers/l2Chains";
import { sentFieldsV06, withAnsweredFieldsV07, withAnsweredGas } from "../helpers/userOps";

const CHAIN_ID = 8453;
const serviceKey = generatePrivateKey();
const depositForAbi = parseAbi(["function depositFor(address paymasterId) payable"]);

let chain: OpStackChain;
let stacks: PaymasterStacks;
/** The service as the chains file configures it on Base (the chain id's model), and one told the chain has none. */
let priced: { t: TestApp; dapp: Dapp };
let unaware: { t: TestApp; dapp: Dapp };

/** The service with a chains file entry for this chain, read as at start (so the chain id's default model applies). */
async function service(extra: Record<string, unknown>) {
  const entry = {
    chainId: CHAIN_ID,
    name: "Base (anvil in OP mode)",
    rpcUrl: chain.anvil.rpcUrl,
    verifyingPaymaster: stacks.v06.verifyingPaymaster,
    entryPoints: { "0.7": { verifyingPaymaster: stacks.later["0.7"].verifyingPaymaster } },
    ...extra,
  };
  const t = await appFromChainsEntry(entry, serviceKey);
  return { t, dapp: await sponsoringDapp(t, CHAIN_ID) };
}

before(async () => {
  chain = await startOpStackChain({ chainId: CHAIN_ID });
  stacks = await deployPaymasterStacks(chain, privateKeyToAccount(serviceKey).address);
  for (const paymaster of [stacks.v06.verifyingPaymaster, stacks.later["0.7"].verifyingPaymaster]) {
    const hash = await chain.wallet(anvilKeys.fundingWallet).writeContract({
      address: paymaster,
      abi: depositForAbi,
      functionName: "depositFor",
      args: [privateKeyToAccount(anvilKeys.fundingWallet).address],
      value: parseEther("1"),
    });
    await chain.publicClient.waitForTransactionReceipt({ hash });
  }
  priced = await service({});
  unaware = await service({ l1DataFee: "none" });
});

after(async () => {
  try {
    await priced?.t.close();
    await unaware?.t.close();
  } finally {
    await chain?.anvil.stop();
  }
});

/** A fresh submitter for each operation: its balance is the bundler's gain or loss. */
function submitter() {
  const key = generatePrivateKey();
  return { key, address: privateKeyToAccount(key).address };
}

/** Sends `data` to `entryPoint` from `key` at the operation's fees; what the sender's balance gained (may be < 0). */
async function submitAlone(
  key: Hex,
  entryPoint: Address,
  data: Hex,
  fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
) {
  const address = privateKeyToAccount(key).address;
  await chain.testClient.setBalance({ address, value: parseEther("1") });
  const before = await chain.publicClient.getBalance({ address });
  const hash = await chain.wallet(key).sendTransaction({ to: entryPoint, data, ...fees });
  const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, "success");
  const after = await chain.publicClient.getBalance({ address });
  return { receipt, gained: after - before };
}

async function ledgerL1Gas(app: { t: TestApp; dapp: Dapp }, sender: Address): Promise<string | null | undefined> {
  const reply = await app.t.call("GET", "sponsorships", { token: app.dapp.token, apiKey: app.dapp.apiKey });
  const rows = reply.body.data as { sender: string; l1DataGas: string | null }[];
  return rows.find((row) => row.sender === sender.toLowerCase())?.l1DataGas;
}

/** A first SimpleAccount v0.6 operation, estimated and signed by `app` from Biconomy's form, then signed by its owner. */
async function sponsoredV06(app: { t: TestApp; dapp: Dapp }) {
  const { op, owner } = await newAccountOperation(chain, { to: TARGET, value: 0n });
  const reply = await rpc(app.t, app.dapp, "pm_sponsorUserOperation", [
    sentFieldsV06(op, ["sender", "nonce", "initCode", "callData"]),
    { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: INFINITISM } },
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const answer = reply.body.result as Record<string, string | number> & { paymasterAndData: Hex; reason?: string };
  assert.equal(answer.reason, undefined, answer.reason);
  const full: UserOperation = { ...withAnsweredGas(op, answer), paymasterAndData: answer.paymasterAndData };
  return signByAccount(chain, full, owner);
}

async function bundleV06(op: UserOperation) {
  const { key, address } = submitter();
  const data = encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[op], address] });
  const outcome = await submitAlone(key, ENTRY_POINT_V06_ADDRESS, data, op);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: outcome.receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true, "the operation ran");
  return outcome;
}

describe("v0.6, Biconomy's form with calculateGasLimits, no bundler", () => {
  test("the submitter of the signed operation is made whole: gas and L1 fee paid back", async (t) => {
    const op = await sponsoredV06(priced);
    const l1DataGas = await ledgerL1Gas(priced, op.sender);
    assert.ok(l1DataGas !== null && l1DataGas !== undefined && BigInt(l1DataGas) > 10_000n, `l1DataGas ${l1DataGas}`);
    assert.ok(op.preVerificationGas > BigInt(l1DataGas), "the L1 part is inside preVerificationGas");
    const { receipt, gained } = await bundleV06(op);
    t.diagnostic(
      `v0.6 first operation: preVerificationGas ${op.preVerificationGas}, of which L1 ${l1DataGas}; ` +
        `handleOps used ${receipt.gasUsed} gas at ${receipt.effectiveGasPrice} wei; the submitter gained ${gained} wei`,
    );
    assert.ok(gained >= 0n, `the submitter lost ${-gained} wei`);
    // The metric graphs the L1 part of each signed sponsorship, per chain.
    const metrics = (await priced.t.app.inject({ method: "GET", url: "/metrics" })).body;
    const count = /^paymaster_l1_data_gas_count\{chain_id="8453"\} (\d+)$/m.exec(metrics)?.[1];
    const sum = /^paymaster_l1_data_gas_sum\{chain_id="8453"\} (\d+)$/m.exec(metrics)?.[1];
    assert.ok(Number(count) >= 1 && Number(sum) >= Number(l1DataGas), `count ${count}, sum ${sum}`);
  });

  test("without the L1 part (the chains file says none), the submitter loses about the L1 fee", async (t) => {
    const op = await sponsoredV06(unaware);
    assert.equal(await ledgerL1Gas(unaware, op.sender), "0");
    const { gained } = await bundleV06(op);
    t.diagnostic(`v0.6 priced without the L1 part: the submitter gained ${gained} wei`);
    assert.ok(gained < 0n, `the submitter should lose the L1 fee, gained ${gained}`);
  });

  test("with the GasPriceOracle gone, nothing is signed: -32002 naming the chain and the oracle", async () => {
    await chain.setGasPriceOracle(false);
    try {
      const { op } = await newAccountOperation(chain, { to: TARGET, value: 0n });
      const reply = await rpc(priced.t, priced.dapp, "pm_sponsorUserOperation", [
        sentFieldsV06(op, ["sender", "nonce", "initCode", "callData"]),
        { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: INFINITISM } },
      ]);
      assert.equal(reply.status, 503, JSON.stringify(reply.body));
      assert.equal(reply.body.error.code, -32002);
      assert.match(
        reply.body.error.message,
        /^Gas estimation is unavailable on chain 8453: its L1 data fee could not be read: GasPriceOracle 0x420000000000000000000000000000000000000f could not be read: no contract answers there/,
      );
      assert.equal(await ledgerL1Gas(priced, op.sender), undefined, "nothing recorded");
    } finally {
      await chain.setGasPriceOracle(true);
    }
  });
});

describe("v0.7, Pimlico's form with calculateGasLimits, no bundler", () => {
  test("estimated through the node, signed with the L1 part, and the submitter is made whole", async (t) => {
    const stack = stacks.later["0.7"];
    const { account, op } = await freshOperationV07(chain.publicClient, "0.7", stack, {
      calls: [{ to: TARGET, value: 0n }],
      priorityFee: 1_000_000n,
    });
    const reply = await rpc(priced.t, priced.dapp, "pm_sponsorUserOperation", [
      formatUserOperationRequest({
        ...op,
        callGasLimit: 0n,
        verificationGasLimit: 0n,
        preVerificationGas: 0n,
      } as ViemOperation),
      stack.entryPoint,
      { calculateGasLimits: true },
    ]);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const result = reply.body.result as Record<string, Hex>;
    const full: ViemOperation<"0.7"> = withAnsweredFieldsV07(op, result);
    const l1DataGas = await ledgerL1Gas(priced, op.sender);
    assert.ok(l1DataGas && BigInt(l1DataGas) > 10_000n, `l1DataGas ${l1DataGas}`);
    const signed = { ...full, signature: await account.signUserOperation(full) };
    const { key, address } = submitter();
    const data = encodeFunctionData({
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[toPackedUserOperation(signed)], address],
    });
    const { receipt, gained } = await submitAlone(key, stack.entryPoint, data, op);
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.equal(event?.args.success, true, "the operation ran");
    t.diagnostic(
      `v0.7 first operation: preVerificationGas ${full.preVerificationGas}, of which L1 ${l1DataGas}; ` +
        `handleOps used ${receipt.gasUsed} gas; the submitter gained ${gained} wei`,
    );
    assert.ok(gained >= 0n, `the submitter lost ${-gained} wei`);
  });
});
