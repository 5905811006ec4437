// The main SDK flow through a real bundler: a SimpleAccount operation with no gas fields goes to the service's
// pm_sponsorUserOperation over HTTP with calculateGasLimits: true, the owner signs what comes back, and the Alto bundler
// (a child process against anvil, unsafe mode) accepts it with eth_sendUserOperation and mines it with success.
// Once with the chain's bundlerUrl configured (the bundler estimates), once without fees in the request (the service
// chooses them and returns them), and once without a bundler configured (the service simulates through the node).
// Each time, a pass of the settlement watcher then settles the sponsorship to the operation's actual cost: the record
// and the NATIVE_ASSET spending limit, which held the worst case until then, hold what the operation really cost.
//
// Every operation goes to Alto's v2 API, the one Pimlico's hosted bundlers serve (Alto here answers with it at its
// bare URL), which also refuses at eth_sendUserOperation an operation whose preVerificationGas or fees are below its
// own rules; the service's own estimate goes through v1 as well, which checks neither. Alto v2 prices
// paymasterAndData and the signature at twice their length (it counts hex characters as bytes): it asks about 55,500
// preVerificationGas of the operation below, where the reference bundler's rule gives about 48,000 and handleOps
// spends about 50,500 outside the EntryPoint's metering. The service signs the larger rule plus 10 %.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, concat, encodeFunctionData, type Hex, parseEther, toHex } from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import { simpleAccountFactoryArtifact, verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import type { ChainConfig } from "../../src/config";
import { LOCAL_VERIFYING_PAYMASTER_ADDRESS, simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { addVerifyingPaymasterSigner, deployLocalStack } from "../../src/devChain/localDeployment";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { type Settlement, startSettlement } from "../../src/settlement/watcher";
import { createSigner } from "../../src/signer/signer";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";
import { type Alto, startAlto } from "../helpers/alto";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { sendAndWaitV06 } from "../helpers/bundlerV06";
import { addPolicy, linkFundingWallet, whitelist } from "../helpers/dappSetup";
import { freshAccount } from "../helpers/freshAccount";
import { postJsonRpc } from "../helpers/postJsonRpc";

const CHAIN_ID = 31337;
const INFINITISM = { name: "INFINITISM", version: "1.0.0" };
const factory = simpleAccountFactoryDeployment.address;
const serviceSigner = createSigner(generatePrivateKey());
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet);

interface Service {
  app: TestApp;
  baseUrl: string;
  dapp: Dapp;
  /** A PAYMASTER NATIVE_ASSET limit of the dApp: where settlement replaces the worst case by the actual cost. */
  spendLimit: string;
  settlement: Settlement;
}

let chain: LocalChain | undefined;
let alto: Alto | undefined;
const services: Service[] = [];
let withBundler: Service;
let withoutBundler: Service;

before(async () => {
  chain = await startLocalChain({ chainId: CHAIN_ID });
  const stack = await deployLocalStack(chain.clients(anvilKeys.owner));
  assert.equal(stack.verifyingPaymaster.address, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
  await addVerifyingPaymasterSigner(chain.clients(anvilKeys.owner), serviceSigner.address);
  const hash = await chain.wallet(anvilKeys.fundingWallet).writeContract({
    address: LOCAL_VERIFYING_PAYMASTER_ADDRESS,
    abi: verifyingPaymasterArtifact.abi,
    functionName: "depositFor",
    args: [fundingWallet.address],
    value: parseEther("1"),
  });
  await chain.publicClient.waitForTransactionReceipt({ hash });

  alto = await startAlto({
    rpcUrl: chain.anvil.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.stranger,
    apiVersions: ["v2", "v1"],
  });
  // A hosted bundler's URL as operators configure it: the default API, v2.
  withBundler = await startService({ rpcUrl: chain.anvil.rpcUrl, bundlerUrl: alto.url });
  withoutBundler = await startService({ rpcUrl: chain.anvil.rpcUrl });
});

after(async () => {
  try {
    for (const service of services) {
      await service.settlement.stop();
      await service.app.close();
    }
  } finally {
    await alto?.stop();
    await chain?.anvil.stop();
  }
});

/** A service with chain 31337 configured as given, listening on a real port, and a dApp set up on it. */
async function startService(chainConfig: Pick<ChainConfig, "rpcUrl" | "bundlerUrl">): Promise<Service> {
  const app = await startTestApp({
    signer: serviceSigner,
    chains: new Map([[CHAIN_ID, { chainId: CHAIN_ID, name: "local", ...chainConfig }]]),
  });
  const dapp = await app.dapp();
  const spendLimit = await addPolicy(
    app,
    dapp,
    "PAYMASTER_SA_LIMIT",
    { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 1, thresholdType: "NATIVE_ASSET" },
    "spend",
  );
  // Passes only when the test asks (settleOnce), so that it can look before and after.
  const service: Service = {
    app,
    baseUrl: "",
    dapp,
    spendLimit,
    settlement: startSettlement(app.ctx, { poll: false }),
  };
  services.push(service);
  service.baseUrl = await app.app.listen({ port: 0, host: "127.0.0.1" });
  // Both services' dApps name the same funding wallet, so the one deposit above pays for both.
  await linkFundingWallet(app, service.dapp, anvilKeys.fundingWallet);
  await addPolicy(app, service.dapp, "WALLET_DEPLOYMENT", {});
  await whitelist(app, service.dapp, factory, simpleAccountFactoryArtifact.abi, ["createAccount"]);
  return service;
}

function altoUrl(version: "v1" | "v2"): string {
  assert.ok(alto, "Alto did not start");
  return `${alto.url}/${version}/rpc`;
}

function requireChain(): LocalChain {
  assert.ok(chain, "anvil did not start");
  return chain;
}

/** The first operation of a new SimpleAccount, as the SDK sends it: no gas limits, no paymasterAndData. */
async function firstOperation(owner: LocalAccount, call: Hex) {
  const env = requireChain();
  const sender = await env.publicClient.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  return {
    sender,
    nonce: 0n,
    initCode: concat([
      factory,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner.address, 0n] }),
    ]),
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [factory, 0n, call] }),
  };
}

interface SponsorResult {
  mode: string;
  paymasterAndData: Hex;
  callGasLimit: number;
  verificationGasLimit: number;
  preVerificationGas: string;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
  reason?: string;
}

async function sponsorOverHttp(service: Service, userOp: Record<string, unknown>) {
  const started = performance.now();
  const { status, body } = await postJsonRpc<SponsorResult>(
    `${service.baseUrl}/api/v1/${CHAIN_ID}/${service.dapp.apiKey}`,
    "pm_sponsorUserOperation",
    [
      { ...userOp, signature: "0x" },
      { mode: "SPONSORED", calculateGasLimits: true, sponsorshipInfo: { smartAccountInfo: INFINITISM } },
    ],
  );
  assert.equal(status, 200, JSON.stringify(body));
  assert.ok(body.result, JSON.stringify(body));
  assert.equal(body.result.reason, undefined, `refused: ${body.result.reason}`);
  return { result: body.result, ms: Math.round(performance.now() - started) };
}

/** What the dApp's NATIVE_ASSET limit counts in its current cycle, in wei. */
async function limitUsed(service: Service): Promise<bigint> {
  const [row] = await service.app.db.query<{ used: string }>(
    "SELECT COALESCE(SUM(used), 0)::text AS used FROM limit_usage WHERE policy_id = $1",
    [service.spendLimit],
  );
  return BigInt(row?.used ?? "0");
}

async function hasCode(address: Address): Promise<boolean> {
  const code = await requireChain().publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

/**
 * The whole flow for one new account whose call creates another account (a whitelisted method): sponsor without gas
 * fields, sign, send to Alto, wait for the receipt, check that both accounts exist.
 */
async function runFlow(service: Service, fees: "sent" | "omitted", bundlerUrl: string) {
  const env = requireChain();
  const owner = privateKeyToAccount(generatePrivateKey());
  const { sender: created, factoryData: call } = await freshAccount(env.publicClient, factory);
  const partial = await firstOperation(owner, call);
  const clientFees = fees === "sent" ? await env.publicClient.estimateFeesPerGas() : undefined;
  const usedAtStart = await limitUsed(service);
  const { result, ms } = await sponsorOverHttp(service, {
    sender: partial.sender,
    nonce: toHex(partial.nonce),
    initCode: partial.initCode,
    callData: partial.callData,
    ...(clientFees
      ? { maxFeePerGas: toHex(clientFees.maxFeePerGas), maxPriorityFeePerGas: toHex(clientFees.maxPriorityFeePerGas) }
      : {}),
  });
  if (clientFees) {
    assert.equal(result.maxFeePerGas, undefined, "the client's fees are not echoed");
  } else {
    assert.match(result.maxFeePerGas ?? "", /^0x[0-9a-f]+$/, "the fees the service chose are returned");
    assert.match(result.maxPriorityFeePerGas ?? "", /^0x[0-9a-f]+$/);
  }
  const unsigned: UserOperation = {
    ...partial,
    callGasLimit: BigInt(result.callGasLimit),
    verificationGasLimit: BigInt(result.verificationGasLimit),
    preVerificationGas: BigInt(result.preVerificationGas),
    maxFeePerGas: clientFees?.maxFeePerGas ?? BigInt(result.maxFeePerGas as Hex),
    maxPriorityFeePerGas: clientFees?.maxPriorityFeePerGas ?? BigInt(result.maxPriorityFeePerGas as Hex),
    paymasterAndData: result.paymasterAndData,
    signature: "0x",
  };
  const userOpHash = getUserOpHash(unsigned, ENTRY_POINT_V06_ADDRESS, CHAIN_ID);
  const op = { ...unsigned, signature: await owner.signMessage({ message: { raw: userOpHash } }) };
  assert.equal(
    await env.publicClient.readContract({
      address: ENTRY_POINT_V06_ADDRESS,
      abi: entryPointAbi,
      functionName: "getUserOpHash",
      args: [op],
    }),
    userOpHash,
  );

  const usedBefore = await limitUsed(service);
  assert.equal(
    usedBefore,
    usedAtStart + worstCaseCostWei(op),
    "the limit reserved the worst case of the signed values",
  );
  const receipt = await sendAndWaitV06(bundlerUrl, op, CHAIN_ID, () => alto?.output() ?? "");
  assert.equal(receipt.success, true, JSON.stringify(receipt));
  assert.equal(receipt.receipt.status, "0x1");
  assert.equal(await hasCode(partial.sender), true, "the account was not deployed");
  assert.equal(await hasCode(created), true, "the whitelisted call did not run");

  // Until settlement the limit holds the worst case of the signed values; after it, the actual cost of the operation.
  const actualCost = BigInt(receipt.actualGasCost);
  const worstCase = worstCaseCostWei(op);
  assert.ok(actualCost > 0n && actualCost < worstCase, `actual ${actualCost}, worst case ${worstCase}`);
  const [pass] = await service.settlement.settleOnce();
  assert.equal(
    pass?.settled,
    1,
    JSON.stringify(pass, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
  );
  const [record] = await service.app.db.query<{ actual_cost: string; success: boolean; settled: boolean }>(
    `SELECT actual_cost::text AS actual_cost, success, settled_at IS NOT NULL AS settled
     FROM sponsorships WHERE user_op_hash = $1`,
    [userOpHash.toLowerCase()],
  );
  assert.deepEqual(record, { actual_cost: actualCost.toString(), success: true, settled: true });
  assert.equal(await limitUsed(service), usedBefore - worstCase + actualCost, "the limit holds the actual cost");
  return (
    `sponsored in ${ms} ms: callGasLimit ${result.callGasLimit}, verificationGasLimit ${result.verificationGasLimit}, ` +
    `preVerificationGas ${result.preVerificationGas}; used ${BigInt(receipt.actualGasUsed)} gas ` +
    `(bundle transaction ${BigInt(receipt.receipt.gasUsed)}); settled at ${actualCost} wei, worst case ${worstCase} wei`
  );
}

test("with the chain's bundler: an operation sent without gas fields is estimated, signed, accepted and mined", async (t) => {
  t.diagnostic(await runFlow(withBundler, "sent", altoUrl("v2")));
});

test("with the chain's bundler and no fees in the request: the bundler's fees are signed and returned", async (t) => {
  t.diagnostic(await runFlow(withBundler, "omitted", altoUrl("v2")));
});

test("without a bundler configured: the service's own estimate through the node is accepted and mined by Alto v2", async (t) => {
  t.diagnostic(await runFlow(withoutBundler, "omitted", altoUrl("v2")));
});

test("without a bundler configured: the same through Alto v1", async (t) => {
  t.diagnostic(await runFlow(withoutBundler, "omitted", altoUrl("v1")));
});
