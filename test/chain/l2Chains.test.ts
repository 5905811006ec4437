// The L2 chains of test/helpers/l2Chains.ts hold what later tests of the L1 data fee rely on: on the OP-stack chain,
// GasPriceOracle answers Fjord's fee and the chain really takes it from the sender; on the Arbitrum chain, the
// NodeInterface stand-in answers at 0x…C8. On both, the local EntryPoints and our paymasters deploy as on the ordinary
// local chain and a sponsored operation is mined, and Alto starts in the chain's mode and reads the chain's L1 figures.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Address,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  parseEther,
  parseEventLogs,
  parseGwei,
  parseTransaction,
  serializeTransaction,
  size,
  type TransactionReceipt,
  toHex,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import { toRpcUserOperation } from "../../src/gasEstimation/gasEstimationBundler";
import { createSigner } from "../../src/signer/signer";
import {
  anvilKeys,
  depositOn,
  handleOps,
  type LocalChain,
  latestTimestamp,
  newAccountOperation,
  signByAccount,
  sponsor,
} from "../contracts/fixtures";
import {
  gasLimitsV07,
  handleOpsV07,
  newAccountOperationV07,
  signByAccountV07,
  sponsorV07,
} from "../contracts/v07/fixtures";
import { startAlto } from "../helpers/alto";
import {
  type ArbitrumChain,
  DEFAULT_ARBITRUM_L1_GAS,
  DEFAULT_OP_STACK_FEES,
  deployPaymasterStacks,
  GAS_PRICE_ORACLE_ADDRESS,
  gasPriceOracleAbi,
  L1_BLOCK_ADDRESS,
  L1_FEE_VAULT_ADDRESS,
  NODE_INTERFACE_ADDRESS,
  nodeInterfaceAbi,
  type OpStackChain,
  type OpStackFees,
  type PaymasterStacks,
  startArbitrumChain,
  startOpStackChain,
} from "../helpers/l2Chains";
import { postJsonRpc } from "../helpers/postJsonRpc";
import { revertEachTest } from "../helpers/revertEachTest";

const serviceKey = generatePrivateKey();
const serviceSigner = createSigner(serviceKey);
const bundler = privateKeyToAccount(anvilKeys.bundler).address;
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet).address;
const freshAddress = () => privateKeyToAccount(generatePrivateKey()).address;
const randomBytes = (length: number) => toHex(crypto.getRandomValues(new Uint8Array(length)));

// Fjord's L1 fee: estimatedSize × price / 1e12, estimatedSize = max(100e6, −42,585,600 + 836,500 × (fastLzSize + 68)).
const MIN_ESTIMATED_SIZE = 100_000_000n;
const INTERCEPT = -42_585_600n;
const FASTLZ_COEFFICIENT = 836_500n;
const priceOf = (fees: OpStackFees) =>
  16n * fees.baseFeeScalar * fees.l1BaseFee + fees.blobBaseFeeScalar * fees.blobBaseFee;
/** The estimated size a fee was worked out from: price exceeds 1e12, so exactly one integer gives the rounded fee. */
const estimatedSizeOf = (fee: bigint, fees: OpStackFees) => (fee * 10n ** 12n + priceOf(fees) - 1n) / priceOf(fees);

/** The transaction as GasPriceOracle wants it: serialized without its signature (it adds 68 bytes for one). */
async function unsignedOf(chain: LocalChain, hash: Hex): Promise<Hex> {
  const raw = await chain.publicClient.request({ method: "eth_getRawTransactionByHash", params: [hash] });
  assert.ok(raw, `no raw transaction ${hash}`);
  const { r, s, v, yParity, ...unsigned } = parseTransaction(raw);
  return serializeTransaction(unsigned);
}

/** What a transaction's sender paid beyond gas × price: anvil's receipt names no L1 fee, so it is read from balances. */
async function paidBeyondGas(chain: LocalChain, key: Hex, send: () => Promise<TransactionReceipt>) {
  const sender = privateKeyToAccount(key).address;
  const [before, vaultBefore] = await Promise.all([
    chain.publicClient.getBalance({ address: sender }),
    chain.publicClient.getBalance({ address: L1_FEE_VAULT_ADDRESS }),
  ]);
  const receipt = await send();
  assert.equal(receipt.status, "success");
  const [afterwards, vaultAfter] = await Promise.all([
    chain.publicClient.getBalance({ address: sender }),
    chain.publicClient.getBalance({ address: L1_FEE_VAULT_ADDRESS }),
  ]);
  return {
    receipt,
    /** Negative change of the sender's balance, less gas; the caller adds back what the sender received. */
    beyondGas: before - afterwards - receipt.gasUsed * receipt.effectiveGasPrice,
    vault: vaultAfter - vaultBefore,
  };
}

async function sendData(chain: LocalChain, data: Hex): Promise<TransactionReceipt> {
  const hash = await chain.wallet(anvilKeys.stranger).sendTransaction({ to: freshAddress(), data });
  return chain.publicClient.waitForTransactionReceipt({ hash });
}

/** A first SimpleAccount operation sponsored by our v0.6 paymaster, signed by the service's key and the owner. */
async function sponsoredV06(chain: LocalChain, stacks: PaymasterStacks, gas: Partial<UserOperation> = {}) {
  const { op, owner } = await newAccountOperation(chain, { to: freshAddress(), value: 0n });
  const terms = {
    paymaster: stacks.v06.verifyingPaymaster,
    paymasterId: fundingWallet,
    signer: serviceSigner,
    validUntil: (await latestTimestamp(chain)) + 300,
    validAfter: 0,
    chainId: chain.chain.id,
  };
  return signByAccount(chain, await sponsor({ ...op, ...gas }, terms), owner);
}

/**
 * The funding wallet's balance in our v0.6 paymaster, from which it sponsors. Made once, before the snapshots: the same
 * deposit sent again after a revert would have the same hash, which viem's receipt wait can miss.
 */
function depositV06(chain: LocalChain, stacks: PaymasterStacks): Promise<void> {
  return depositOn({ ...chain, paymaster: stacks.v06.verifyingPaymaster, serviceSigner, serviceKey }, parseEther("1"));
}

async function assertDeployed(chain: LocalChain, stacks: PaymasterStacks): Promise<void> {
  const addresses = [...Object.values(stacks.v06), ...Object.values(stacks.later).flatMap(Object.values)] as Address[];
  for (const address of addresses) {
    assert.notEqual((await chain.publicClient.getCode({ address })) ?? "0x", "0x", `code at ${address}`);
  }
}

/** One sponsored v0.6 operation through handleOps, which must succeed; returns the bundle's receipt. */
async function minedV06(chain: LocalChain, stacks: PaymasterStacks): Promise<TransactionReceipt> {
  const receipt = await handleOps(chain, [await sponsoredV06(chain, stacks)]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true);
  assert.equal(event.args.paymaster, stacks.v06.verifyingPaymaster);
  return receipt;
}

async function altoCall(url: string, method: string, params: unknown[]) {
  return (await postJsonRpc(url, method, params)).body;
}

function startAltoOn(chain: LocalChain, chainType: "op-stack" | "arbitrum", entryPoints: Address[]) {
  return startAlto({
    rpcUrl: chain.anvil.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.stranger,
    apiVersions: ["v2", "v1"],
    entryPoints,
    chainType,
  });
}

describe("an OP-stack chain (anvil in OP mode, Fjord's GasPriceOracle)", () => {
  let op: OpStackChain;
  let stacks: PaymasterStacks;
  before(async () => {
    op = await startOpStackChain();
    stacks = await deployPaymasterStacks(op, serviceSigner.address);
    await depositV06(op, stacks);
  });
  after(() => op?.anvil.stop());
  revertEachTest(() => op.testClient);

  test("runs on chain 10 with the predeploys' code and Fjord on", async () => {
    assert.equal(await op.publicClient.getChainId(), 10);
    assert.notEqual((await op.publicClient.getCode({ address: L1_BLOCK_ADDRESS })) ?? "0x", "0x");
    const fjord = await op.publicClient.readContract({
      address: GAS_PRICE_ORACLE_ADDRESS,
      abi: gasPriceOracleAbi,
      functionName: "isFjord",
    });
    assert.equal(fjord, true);
  });

  test("getL1Fee answers Fjord's fee, in proportion to the L1 prices", async () => {
    const fees = await op.l1Fees();
    assert.deepEqual(fees, DEFAULT_OP_STACK_FEES);
    // Data that compresses to almost nothing pays the floor.
    assert.equal(await op.getL1Fee(toHex(new Uint8Array(2_000))), (MIN_ESTIMATED_SIZE * priceOf(fees)) / 10n ** 12n);
    // Random data does not compress: FastLZ adds a byte per 32 literals, so its size is a little above the length.
    const data = randomBytes(2_000);
    const fee = await op.getL1Fee(data);
    const estimated = estimatedSizeOf(fee, fees);
    assert.equal((estimated - INTERCEPT) % FASTLZ_COEFFICIENT, 0n, `${estimated} is on the regression`);
    const fastLzSize = (estimated - INTERCEPT) / FASTLZ_COEFFICIENT - 68n;
    assert.ok(
      fastLzSize >= 2_000n && fastLzSize <= 2_000n + 63n + 8n,
      `FastLZ size ${fastLzSize} of 2,000 random bytes`,
    );

    await op.setL1Fees({ blobBaseFee: 2n * fees.blobBaseFee });
    const doubled = await op.l1Fees();
    assert.deepEqual(doubled, { ...fees, blobBaseFee: 2n * fees.blobBaseFee });
    const higher = await op.getL1Fee(data);
    assert.ok(higher > fee, `${higher} > ${fee}`);
    assert.equal(estimatedSizeOf(higher, doubled), estimated, "the same size at the new price");
  });

  test("a transaction's sender pays the L1 fee beyond gas, into the vault, as getL1Fee prices it", async () => {
    const { receipt, beyondGas, vault } = await paidBeyondGas(op, anvilKeys.stranger, () =>
      sendData(op, randomBytes(1_000)),
    );
    assert.equal(vault, beyondGas);
    const quoted = await op.getL1Fee(await unsignedOf(op, receipt.transactionHash));
    // The oracle counts 68 bytes for the signature the chain compresses with the rest: a few bytes' worth apart.
    const fees = await op.l1Fees();
    const apart = estimatedSizeOf(quoted, fees) - estimatedSizeOf(beyondGas, fees);
    assert.ok(
      apart >= -8n * FASTLZ_COEFFICIENT && apart <= 8n * FASTLZ_COEFFICIENT,
      `quoted ${quoted}, paid ${beyondGas}`,
    );
  });

  test("Isthmus's operator fee: this GasPriceOracle cannot report it, anvil charges it from L1Block", async () => {
    await assert.rejects(
      op.publicClient.readContract({
        address: GAS_PRICE_ORACLE_ADDRESS,
        abi: gasPriceOracleAbi,
        functionName: "getOperatorFee",
        args: [100_000n],
      }),
    );
    const constant = 10n ** 12n;
    await op.setOperatorFee({ scalar: 0n, constant });
    const { beyondGas, vault } = await paidBeyondGas(op, anvilKeys.stranger, () => sendData(op, "0x01"));
    assert.equal(beyondGas - vault, constant, "the L1 fee to the vault, the operator fee on top");
  });

  test("without the GasPriceOracle getL1Fee reverts, and the chain still takes the L1 fee", async () => {
    await op.setGasPriceOracle(false);
    await assert.rejects(op.getL1Fee("0x01"));
    const { beyondGas, vault } = await paidBeyondGas(op, anvilKeys.stranger, () => sendData(op, "0x01"));
    assert.ok(vault > 0n && vault === beyondGas);
    await op.setGasPriceOracle(true);
    assert.ok((await op.getL1Fee("0x01")) > 0n);
  });

  test("every stack deploys; a sponsored v0.6 handleOps is mined, the bundler paying its L1 fee", async (t) => {
    await assertDeployed(op, stacks);

    // The bundler is the beneficiary: the EntryPoint pays it the operation's gas cost back, never the L1 fee.
    let actualGasCost = 0n;
    const { receipt, beyondGas, vault } = await paidBeyondGas(op, anvilKeys.bundler, async () => {
      const mined = await minedV06(op, stacks);
      const [event] = parseEventLogs({ abi: entryPointAbi, logs: mined.logs, eventName: "UserOperationEvent" });
      actualGasCost = event?.args.actualGasCost ?? 0n;
      return mined;
    });
    const l1Fee = beyondGas + actualGasCost;
    assert.equal(vault, l1Fee);
    const unsigned = await unsignedOf(op, receipt.transactionHash);
    const quoted = await op.getL1Fee(unsigned);
    const fees = await op.l1Fees();
    const apart = estimatedSizeOf(quoted, fees) - estimatedSizeOf(l1Fee, fees);
    assert.ok(apart >= -8n * FASTLZ_COEFFICIENT && apart <= 8n * FASTLZ_COEFFICIENT, `quoted ${quoted}, paid ${l1Fee}`);
    t.diagnostic(
      `handleOps of one first operation, ${size(unsigned)} bytes unsigned, ${receipt.gasUsed} gas at ` +
        `${receipt.effectiveGasPrice} wei: getL1Fee ${quoted} wei, charged ${l1Fee} wei ` +
        `(${l1Fee / receipt.effectiveGasPrice} gas at that price)`,
    );
  });

  test("a sponsored v0.7 handleOps is mined", async () => {
    const stack = stacks.later["0.7"];
    const env = {
      ...op,
      version: "0.7" as const,
      entryPoint: stack.entryPoint,
      factory: stack.simpleAccountFactory,
      paymaster: stack.verifyingPaymaster,
      serviceSigner,
      serviceKey,
    };
    const deposit = await op.wallet(anvilKeys.fundingWallet).writeContract({
      address: stack.verifyingPaymaster,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "depositFor",
      args: [fundingWallet],
      value: parseEther("1"),
    });
    await op.publicClient.waitForTransactionReceipt({ hash: deposit });
    const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
    const sponsored = await sponsorV07(draft.op, {
      paymaster: stack.verifyingPaymaster,
      paymasterId: fundingWallet,
      signer: serviceSigner,
      validUntil: (await latestTimestamp(op)) + 300,
      validAfter: 0,
      chainId: op.chain.id,
      paymasterVerificationGasLimit: gasLimitsV07.paymasterVerificationGasLimit,
      paymasterPostOpGasLimit: gasLimitsV07.paymasterPostOpGasLimit,
    });
    const receipt = await handleOpsV07(env, [await signByAccountV07(env, sponsored, draft.owner)], bundler);
    const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.equal(event?.args.success, true);
    assert.equal(event.args.paymaster, stack.verifyingPaymaster);
  });

  test("Alto starts in op-stack mode and answers eth_supportedEntryPoints", async () => {
    const entryPoints = [ENTRY_POINT_V06_ADDRESS, stacks.later["0.7"].entryPoint];
    const alto = await startAltoOn(op, "op-stack", entryPoints);
    try {
      assert.deepEqual((await altoCall(alto.url, "eth_supportedEntryPoints", [])).result, entryPoints);
    } finally {
      await alto.stop();
    }
  });
});

describe("an Arbitrum chain (chain 42161, our NodeInterface stand-in)", () => {
  let arbitrum: ArbitrumChain;
  let stacks: PaymasterStacks;
  before(async () => {
    arbitrum = await startArbitrumChain();
    stacks = await deployPaymasterStacks(arbitrum, serviceSigner.address);
    await depositV06(arbitrum, stacks);
  });
  after(() => arbitrum?.anvil.stop());
  revertEachTest(() => arbitrum.testClient);

  test("the stand-in answers at 0x…C8 in eth_call: a constant and a figure per byte, the fees as set", async () => {
    assert.equal(await arbitrum.publicClient.getChainId(), 42161);
    const data = randomBytes(1_000);
    const figures = await arbitrum.l1Gas();
    assert.deepEqual(figures, DEFAULT_ARBITRUM_L1_GAS);
    const { l1GasConstant, l1GasPerByte, l2BaseFee, l1BaseFeeEstimate } = figures;
    // A plain eth_call with Arbitrum's selector, no sender, as a node's NodeInterface is asked.
    const args = [ENTRY_POINT_V06_ADDRESS, false, data] as const;
    const { data: answer } = await arbitrum.publicClient.call({
      to: NODE_INTERFACE_ADDRESS,
      data: encodeFunctionData({ abi: nodeInterfaceAbi, functionName: "gasEstimateL1Component", args }),
    });
    assert.ok(answer);
    assert.deepEqual(
      decodeFunctionResult({ abi: nodeInterfaceAbi, functionName: "gasEstimateL1Component", data: answer }),
      [l1GasConstant + 1_000n * l1GasPerByte, l2BaseFee, l1BaseFeeEstimate],
    );
    assert.deepEqual(await arbitrum.gasEstimateL1Component(ENTRY_POINT_V06_ADDRESS, data), {
      gasEstimateForL1: l1GasConstant + 1_000n * l1GasPerByte,
      baseFee: l2BaseFee,
      l1BaseFeeEstimate,
    });
    await arbitrum.setL1Gas({ l1GasPerByte: 2n * l1GasPerByte, l2BaseFee: parseGwei("0.02") });
    const doubled = await arbitrum.gasEstimateL1Component(ENTRY_POINT_V06_ADDRESS, data);
    assert.equal(doubled.gasEstimateForL1, l1GasConstant + 2_000n * l1GasPerByte);
    assert.equal(doubled.baseFee, parseGwei("0.02"));
  });

  test("every stack deploys and a sponsored v0.6 handleOps is mined", async () => {
    await assertDeployed(arbitrum, stacks);
    await minedV06(arbitrum, stacks);
  });

  test("Alto starts in arbitrum mode, answers eth_supportedEntryPoints and asks the stand-in", async (t) => {
    const alto = await startAltoOn(arbitrum, "arbitrum", [ENTRY_POINT_V06_ADDRESS]);
    try {
      assert.deepEqual((await altoCall(alto.url, "eth_supportedEntryPoints", [])).result, [ENTRY_POINT_V06_ADDRESS]);
      // One operation, far short: Alto refuses it with the figure it requires, which moves with the stand-in's answer.
      const { fast } = (await altoCall(alto.url, "pimlico_getUserOperationGasPrice", [])).result as {
        fast: { maxFeePerGas: Hex; maxPriorityFeePerGas: Hex };
      };
      const op = await sponsoredV06(arbitrum, stacks, {
        preVerificationGas: 1_000n,
        maxFeePerGas: BigInt(fast.maxFeePerGas),
        maxPriorityFeePerGas: BigInt(fast.maxPriorityFeePerGas),
      });
      const required = async () => {
        const { error } = await altoCall(alto.url, "eth_sendUserOperation", [
          toRpcUserOperation(op),
          ENTRY_POINT_V06_ADDRESS,
        ]);
        const figure = /preVerificationGas is not enough, required: (\d+)/.exec(error?.message ?? "")?.[1];
        assert.ok(figure, `refused for its preVerificationGas: ${JSON.stringify(error)}`);
        return BigInt(figure);
      };
      const withL1 = await required();
      const { l1GasConstant, l1GasPerByte } = await arbitrum.l1Gas();
      await arbitrum.setL1Gas({ l1GasConstant: 0n, l1GasPerByte: 0n });
      const withoutL1 = await required();
      // Alto prices a signed handleOps transaction: the call data and an envelope of under 200 bytes. It asks for 95 %.
      const callData = size(
        encodeFunctionData({ abi: entryPointAbi, functionName: "handleOps", args: [[op], bundler] }),
      );
      const l1Gas = (bytes: number) => (95n * (l1GasConstant + BigInt(bytes) * l1GasPerByte)) / 100n;
      const difference = withL1 - withoutL1;
      t.diagnostic(
        `Alto requires ${withL1} with the stand-in's L1 gas, ${withoutL1} with none; handleOps ${callData} bytes`,
      );
      assert.ok(
        difference >= l1Gas(callData) && difference <= l1Gas(callData + 200),
        `${difference} between ${l1Gas(callData)} and ${l1Gas(callData + 200)}`,
      );
    } finally {
      await alto.stop();
    }
  });
});
