// The service's own gas estimate through a node (anvil with the whole stack): the estimated operation, signed by the
// service and the account, runs with success; preVerificationGas pays for our 276 bytes; an unreachable or silent node
// fails within the bound; a reverting call or a failing validation is reported with its reason.
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, test } from "node:test";
import {
  type Abi,
  type Address,
  encodeFunctionData,
  keccak256,
  parseEther,
  parseEventLogs,
  recoverAddress,
  size,
  toHex,
  zeroAddress,
} from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { entryPointArtifact, verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import { chainClient } from "../../src/chain/chainClient";
import type { SponsoringChain } from "../../src/chain/sponsoringChains";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import {
  type EstimateRequest,
  estimateUserOperationGas,
  GAS_ESTIMATION_TIMEOUT_MS,
  type GasEstimate,
  PAYMASTER_SIGNED_PATH_GAS,
} from "../../src/gasEstimation/gasEstimation";
import { EstimationUnavailableError, OperationRevertedError } from "../../src/gasEstimation/gasEstimationErrors";
import {
  SIMULATION_CALL_GAS,
  SIMULATION_VERIFICATION_GAS,
  simulateOperationGas,
  simulationAbi,
} from "../../src/gasEstimation/gasEstimationSimulation";
import { DUMMY_SIGNATURE, stubPaymasterAndData } from "../../src/gasEstimation/gasEstimationStub";
import { preVerificationGasFor, preVerificationGasFormula } from "../../src/gasEstimation/preVerificationGas";
import {
  anvilKeys,
  depositOn,
  handleOps,
  newAccountOperation,
  type Sponsored,
  signByAccount,
  sponsor,
  startSponsoredChain,
} from "../contracts/fixtures";

const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet);
const factory = simpleAccountFactoryDeployment.address;

let env: Sponsored | undefined;
let chain: SponsoringChain;
let silent: Server | undefined;
const sockets = new Set<Socket>();
let silentUrl: string;

before(async () => {
  env = await startSponsoredChain();
  chain = {
    chainId: env.anvil.chainId,
    name: "anvil",
    entryPoint: ENTRY_POINT_V06_ADDRESS,
    verifyingPaymaster: env.paymaster,
    rpcUrl: env.anvil.rpcUrl,
    entryPoints: new Map(),
  };
  await depositOn(env, parseEther("1"), anvilKeys.fundingWallet);
  // A node that accepts connections and never answers: only a timeout ends a request to it.
  silent = createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent?.listen(0, "127.0.0.1", resolve));
  const address = silent.address();
  assert.ok(address && typeof address === "object");
  silentUrl = `http://127.0.0.1:${address.port}`;
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  silent?.close();
  await env?.anvil.stop();
});

function requireEnv(): Sponsored {
  assert.ok(env, "anvil did not start");
  return env;
}

function terms() {
  const now = Math.floor(Date.now() / 1000);
  return { paymasterId: fundingWallet.address, validUntil: now + 300, validAfter: now - 60 };
}

/** The operation as the SDK sends it with calculateGasLimits: no gas limits, no fees, no signature. */
function request(op: UserOperation, overrides: Partial<EstimateRequest> = {}): EstimateRequest {
  return {
    chain,
    // This chain charges no L1 fee, so nothing here reads the clock: the wall clock stands in for the service's.
    nowMs: Date.now(),
    userOp: { sender: op.sender, nonce: op.nonce, initCode: op.initCode, callData: op.callData },
    signature: "0x",
    terms: terms(),
    ...overrides,
  };
}

/** What the client does with the answer: the estimated values, the service's signature, then the account's. */
async function finalOperation(op: UserOperation, estimate: GasEstimate, owner: LocalAccount) {
  const e = requireEnv();
  const { source: _, ...values } = estimate;
  const sponsored = await sponsor(
    { ...op, ...values },
    { ...terms(), paymaster: e.paymaster, signer: e.serviceSigner, chainId: e.anvil.chainId },
  );
  return signByAccount(e, sponsored, owner);
}

async function timed<T>(work: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work;
  return { value, ms: Math.round(performance.now() - started) };
}

async function rejection(work: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  const error = await work.then(
    () => assert.fail("expected the estimate to fail"),
    (e: unknown) => e,
  );
  return { error, ms: Math.round(performance.now() - started) };
}

/** Estimated against used, for the README's figures. */
function report(estimate: GasEstimate, ms: number, transactionGas: bigint, operationGas: bigint): string {
  const unmetered = transactionGas - (operationGas - estimate.preVerificationGas);
  return (
    `estimate in ${ms} ms: callGasLimit ${estimate.callGasLimit}, verificationGasLimit ` +
    `${estimate.verificationGasLimit}, preVerificationGas ${estimate.preVerificationGas}; the operation used ` +
    `${operationGas} gas, preVerificationGas included; handleOps spent ${transactionGas}, of which ${unmetered} ` +
    "outside the EntryPoint's metering"
  );
}

let deployed: { sender: Address; owner: LocalAccount } | undefined;

test("a new account's first operation, estimated through the node and signed, runs with success in handleOps", async (t) => {
  const e = requireEnv();
  const otherOwner = privateKeyToAccount(generatePrivateKey()).address;
  const call = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: "createAccount",
    args: [otherOwner, 0n],
  });
  const { op, owner } = await newAccountOperation(e, { to: factory, value: 0n, data: call });

  const { value: estimate, ms } = await timed(estimateUserOperationGas(request(op)));
  assert.equal(estimate.source, "node");
  // Fees came from the node: the tip it suggests, and room above the latest base fee.
  const block = await e.publicClient.getBlock();
  assert.ok(estimate.maxPriorityFeePerGas > 0n);
  assert.ok(estimate.maxFeePerGas >= (block.baseFeePerGas ?? 0n) + estimate.maxPriorityFeePerGas);

  const final = await finalOperation(op, estimate, owner);
  const receipt = await handleOps(e, [final]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true, "the call ran out of gas or reverted");
  // The bundler is paid at least what its transaction cost: preVerificationGas covered the unmetered part.
  assert.ok(event.args.actualGasUsed >= receipt.gasUsed, `${event.args.actualGasUsed} < ${receipt.gasUsed}`);
  const created = await e.publicClient.getCode({
    address: await e.publicClient.readContract({
      address: factory,
      abi: simpleAccountFactoryAbi,
      functionName: "getAddress",
      args: [otherOwner, 0n],
    }),
  });
  assert.ok(created && created !== "0x", "the call's account was not created");
  deployed = { sender: op.sender, owner };
  t.diagnostic(report(estimate, ms, receipt.gasUsed, event.args.actualGasUsed));
});

test("an existing account's operation is estimated without initCode and runs with success", async (t) => {
  const e = requireEnv();
  assert.ok(deployed, "the first test must run first");
  const nonce = await e.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getNonce",
    args: [deployed.sender, 0n],
  });
  assert.equal(nonce, 1n);
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  const op: UserOperation = {
    sender: deployed.sender,
    nonce,
    initCode: "0x",
    // A call with no value and no data to an address without code: the smallest call an account makes.
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [recipient, 0n, "0x"] }),
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    paymasterAndData: "0x",
    signature: "0x",
  };
  const { value: estimate, ms } = await timed(estimateUserOperationGas(request(op)));
  const final = await finalOperation(op, estimate, deployed.owner);
  const receipt = await handleOps(e, [final]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.equal(event?.args.success, true);
  assert.ok(event.args.actualGasUsed >= receipt.gasUsed);
  t.diagnostic(report(estimate, ms, receipt.gasUsed, event.args.actualGasUsed));
});

test("preVerificationGas covers the calldata of our 276 bytes, priced by the formula over the signed operation", async () => {
  const e = requireEnv();
  const { op, owner } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const estimate = await estimateUserOperationGas(request(op));
  const final = await finalOperation(op, estimate, owner);
  assert.equal(size(final.paymasterAndData), 276);
  // The formula over the operation exactly as submitted, with its real signatures, is within the estimate.
  assert.ok(preVerificationGasFormula(final) <= estimate.preVerificationGas);
  // And the estimate pays for our bytes: without paymasterAndData the same operation would need at least 276 × 4 less.
  const withoutPaymaster = preVerificationGasFormula({ ...final, paymasterAndData: "0x" });
  assert.ok(estimate.preVerificationGas - withoutPaymaster >= 276n * 4n);
  // Not overpriced either: the same operation with every byte of both signatures non-zero (the validity window may
  // have moved by a second since the estimate, which can change a byte or two of it).
  const worstCase = preVerificationGasFor(final);
  assert.ok(estimate.preVerificationGas - worstCase <= 48n && worstCase - estimate.preVerificationGas <= 48n);
});

test("the client's limits are lower bounds and its fees are kept", async () => {
  const e = requireEnv();
  const { op } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const estimate = await estimateUserOperationGas(request(op));
  const raised = await estimateUserOperationGas(
    request(op, {
      userOp: {
        ...request(op).userOp,
        callGasLimit: 1n,
        verificationGasLimit: estimate.verificationGasLimit + 12_345n,
        maxFeePerGas: 7_000_000_000n,
        maxPriorityFeePerGas: 3_000_000_000n,
      },
    }),
  );
  assert.equal(raised.callGasLimit, estimate.callGasLimit, "a low callGasLimit is raised to the estimate");
  assert.equal(raised.verificationGasLimit, estimate.verificationGasLimit + 12_345n, "a higher one is kept");
  assert.equal(raised.maxFeePerGas, 7_000_000_000n);
  assert.equal(raised.maxPriorityFeePerGas, 3_000_000_000n);
});

test("a call that reverts is reported with its reason", async () => {
  const e = requireEnv();
  // The account asks the paymaster for money it never deposited.
  const withdraw = encodeFunctionData({
    abi: verifyingPaymasterArtifact.abi,
    functionName: "withdrawTo",
    args: [fundingWallet.address, 1n],
  });
  const { op } = await newAccountOperation(e, { to: e.paymaster, value: 0n, data: withdraw });
  const { error } = await rejection(estimateUserOperationGas(request(op)));
  assert.ok(error instanceof OperationRevertedError, String(error));
  assert.equal(error.message, "the operation's call reverts: VerifyingPaymaster: amount exceeds balance");
});

test("a validation that fails is reported with the EntryPoint's reason", async () => {
  const e = requireEnv();
  const { op } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const { error } = await rejection(estimateUserOperationGas(request({ ...op, nonce: 5n })));
  assert.ok(error instanceof OperationRevertedError, String(error));
  assert.match(error.message, /AA25 invalid account nonce/);
  const broken = await rejection(estimateUserOperationGas(request({ ...op, initCode: `${factory}deadbeef` })));
  assert.ok(broken.error instanceof OperationRevertedError, String(broken.error));
  assert.match(broken.error.message, /AA13 initCode failed or OOG/);
});

test("an unreachable node fails at once, and a silent one within the bound", async () => {
  const e = requireEnv();
  const { op } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const refused = await rejection(
    estimateUserOperationGas(request(op, { chain: { ...chain, rpcUrl: "http://127.0.0.1:1" } })),
  );
  assert.ok(refused.error instanceof EstimationUnavailableError, String(refused.error));
  assert.match(refused.error.message, /the connection failed/);
  assert.doesNotMatch(refused.error.message, /127\.0\.0\.1/, "an RPC URL may carry an API key: never in a message");
  assert.ok(refused.ms < 2_000, `${refused.ms} ms`);

  // The silent node: the whole estimate's deadline ends it (here shortened; by default GAS_ESTIMATION_TIMEOUT_MS).
  const silentChain = { ...chain, rpcUrl: silentUrl };
  const timedOut = await rejection(estimateUserOperationGas(request(op, { chain: silentChain }), 500));
  assert.ok(timedOut.error instanceof EstimationUnavailableError, String(timedOut.error));
  assert.match(timedOut.error.message, /did not finish within 500 ms/);
  assert.ok(timedOut.ms >= 450 && timedOut.ms < 1_500, `${timedOut.ms} ms`);
  assert.ok(GAS_ESTIMATION_TIMEOUT_MS <= 10_000);

  // A bundler that refuses connections, with no node to fall back on for fees or limits.
  const bundlerOnly: SponsoringChain = { ...chain, rpcUrl: undefined, bundlerUrl: "http://127.0.0.1:1" };
  const noBundler = await rejection(estimateUserOperationGas(request(op, { chain: bundlerOnly })));
  assert.ok(noBundler.error instanceof EstimationUnavailableError, String(noBundler.error));
  assert.match(noBundler.error.message, /bundler failed .*the connection failed/);
});

test("a silent node's requests end by themselves within the estimate's bound", async () => {
  // Each node request has its own timeout below the estimate's deadline, so nothing lingers after an answer.
  const client = chainClient({ ...chain, rpcUrl: silentUrl });
  assert.ok(client);
  const { error, ms } = await rejection(client.getBlockNumber());
  assert.match(String(error), /timed out|took too long/i);
  assert.ok(ms < GAS_ESTIMATION_TIMEOUT_MS, `${ms} ms`);
});

test("what the dummy signature skips in our paymaster stays within PAYMASTER_SIGNED_PATH_GAS", async (t) => {
  const e = requireEnv();
  const client = chainClient(chain);
  assert.ok(client);
  const { op } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const simulated = {
    ...op,
    callGasLimit: SIMULATION_CALL_GAS,
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
    signature: DUMMY_SIGNATURE,
  };
  const dummy = await simulateOperationGas(client, ENTRY_POINT_V06_ADDRESS, e.paymaster, {
    ...simulated,
    paymasterAndData: stubPaymasterAndData({ ...terms(), paymaster: e.paymaster }),
  });
  // Signed by the real verifying signer over the simulation's values: the paymaster reserves and runs postOp.
  const signed = await sponsor(simulated, {
    ...terms(),
    paymaster: e.paymaster,
    signer: e.serviceSigner,
    chainId: e.anvil.chainId,
  });
  const real = await simulateOperationGas(client, ENTRY_POINT_V06_ADDRESS, e.paymaster, signed);
  const skipped = real.verificationGas - dummy.verificationGas;
  assert.ok(skipped > 0n && skipped <= PAYMASTER_SIGNED_PATH_GAS, `validation with a valid signature: +${skipped}`);
  t.diagnostic(
    `valid paymaster signature: validation +${skipped} gas, postOp and after +${real.executionGas - dummy.executionGas}`,
  );
});

test("the dummy signature recovers to an address, so accounts using ECDSA.recover do not revert on it", async () => {
  assert.equal(size(DUMMY_SIGNATURE), 65);
  for (let i = 0; i < 20; i++) {
    const hash = keccak256(toHex(`message ${i}`));
    const signer = await recoverAddress({ hash, signature: DUMMY_SIGNATURE });
    assert.notEqual(signer, zeroAddress);
  }
});

test("the simulation ABI is EntryPoint v0.6's", () => {
  const signature = (item: Abi[number]) =>
    item.type === "function" || item.type === "error"
      ? `${item.type} ${item.name}(${item.inputs.map((input) => input.type)})`
      : item.type;
  const known = new Set((entryPointArtifact.abi as Abi).map(signature));
  for (const item of simulationAbi as Abi) assert.ok(known.has(signature(item)), signature(item));
});

test("a chain without node or bundler cannot estimate", async () => {
  const e = requireEnv();
  const { op } = await newAccountOperation(e, { to: zeroAddress, value: 0n });
  const { error } = await rejection(estimateUserOperationGas(request(op, { chain: { ...chain, rpcUrl: undefined } })));
  assert.ok(error instanceof EstimationUnavailableError);
});
