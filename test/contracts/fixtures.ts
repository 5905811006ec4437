// A local chain with the whole sponsored-mode stack deployed, and the steps of building a sponsored user operation:
// gas fields, then paymasterAndData (signed by the service), then the account's own signature (which covers it).
import {
  type Account,
  type Address,
  BaseError,
  type Chain,
  ContractFunctionRevertedError,
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  type Hex,
  http,
  type PublicClient,
  parseGwei,
  type TestClient,
  type Transport,
  type WalletClient,
} from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import {
  encodeVerifyingPaymasterAndData,
  getVerifyingPaymasterHash,
} from "../../src/bindings/paymasters/paymasterAndData";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { addVerifyingPaymasterSigner, type ChainClients, deployLocalStack } from "../../src/devChain/localDeployment";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { createSigner, type Signer } from "../../src/signer/signer";
import { type Anvil, type AnvilOptions, startAnvil } from "../helpers/anvil";

/** anvil's default funded accounts (mnemonic "test test ... junk"), by the role each plays here. */
export const anvilKeys = {
  owner: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  bundler: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  fundingWallet: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  otherFundingWallet: "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
  stranger: "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a",
} as const satisfies Record<string, Hex>;

export type Wallet = WalletClient<Transport, Chain, Account>;

export interface LocalChain {
  anvil: Anvil;
  chain: Chain;
  publicClient: PublicClient;
  testClient: TestClient;
  wallet(key: Hex): Wallet;
  clients(key: Hex): ChainClients;
}

export async function startLocalChain(options: AnvilOptions = {}): Promise<LocalChain> {
  const anvil = await startAnvil(options);
  const chain = defineChain({
    id: anvil.chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [anvil.rpcUrl] } },
  });
  const transport = http(anvil.rpcUrl);
  // anvil mines on every transaction: poll receipts every few ms instead of viem's default of seconds.
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 10 });
  const testClient = createTestClient({ mode: "anvil", chain, transport });
  const wallet = (key: Hex): Wallet =>
    createWalletClient({ account: privateKeyToAccount(key), chain, transport, pollingInterval: 10 });
  const clients = (key: Hex): ChainClients => ({ publicClient, walletClient: wallet(key) });
  return { anvil, chain, publicClient, testClient, wallet, clients };
}

export interface Sponsored extends LocalChain {
  paymaster: Address;
  /** The service's key, made the paymaster's verifying signer by its owner. */
  serviceSigner: Signer;
  /** Its raw key, for tests that must sign the wrong way with the right key. */
  serviceKey: Hex;
}

export async function startSponsoredChain(options: AnvilOptions = {}): Promise<Sponsored> {
  const local = await startLocalChain(options);
  try {
    const stack = await deployLocalStack(local.clients(anvilKeys.owner));
    const serviceKey = generatePrivateKey();
    const serviceSigner = createSigner(serviceKey);
    await addVerifyingPaymasterSigner(
      local.clients(anvilKeys.owner),
      serviceSigner.address,
      stack.verifyingPaymaster.address,
    );
    return { ...local, paymaster: stack.verifyingPaymaster.address, serviceSigner, serviceKey };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

/** Puts `value` into the funding wallet's balance in the chain's verifying paymaster; the wallet pays it. */
export async function depositOn(env: Sponsored, value: bigint, fundingKey: Hex = anvilKeys.fundingWallet) {
  const wallet = env.wallet(fundingKey);
  const hash = await wallet.writeContract({
    address: env.paymaster,
    abi: verifyingPaymasterArtifact.abi,
    functionName: "depositFor",
    args: [wallet.account.address],
    value,
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
}

const gasLimits = {
  callGasLimit: 100_000n,
  // Covers deploying the account through initCode; the paymaster's validation and postOp get the same limit each.
  verificationGasLimit: 500_000n,
  preVerificationGas: 50_000n,
} as const;

/** maxCost + the paymaster's overhead at maxFeePerGas: what validation reserves from the dApp's balance. */
export function reservedFor(op: UserOperation, overheadGas: bigint): bigint {
  const maxCost = (op.callGasLimit + 3n * op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;
  return maxCost + overheadGas * op.maxFeePerGas;
}

/** A first operation of a fresh SimpleAccount: initCode deploys it, callData runs `execute(to, value, data)`. */
export async function newAccountOperation(
  env: LocalChain,
  call: { to: Address; value: bigint; data?: Hex },
  owner: LocalAccount = privateKeyToAccount(generatePrivateKey()),
): Promise<{ op: UserOperation; owner: LocalAccount }> {
  const factory = simpleAccountFactoryDeployment.address;
  const sender = await env.publicClient.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  const block = await env.publicClient.getBlock();
  const maxPriorityFeePerGas = parseGwei("1");
  const op: UserOperation = {
    sender,
    nonce: 0n,
    initCode: concat([
      factory,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner.address, 0n] }),
    ]),
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: "execute",
      args: [call.to, call.value, call.data ?? "0x"],
    }),
    ...gasLimits,
    // Above base fee + tip, so the EntryPoint prices gas at base fee + tip and the overhead must follow block.basefee.
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + maxPriorityFeePerGas,
    maxPriorityFeePerGas,
    paymasterAndData: "0x",
    signature: "0x",
  };
  return { op, owner };
}

export interface SponsorOptions {
  paymaster: Address;
  paymasterId: Address;
  signer: Signer;
  validUntil: number;
  validAfter: number;
  chainId: number;
}

/** What the service does: hash the operation with its terms, sign, and lay out paymasterAndData. */
export async function sponsor(op: UserOperation, options: SponsorOptions): Promise<UserOperation> {
  const hash = getVerifyingPaymasterHash(op, options);
  const signature = await options.signer.signHash(hash);
  return { ...op, paymasterAndData: encodeVerifyingPaymasterAndData({ ...options, signature }) };
}

/** The account's signature last: SimpleAccount signs the userOpHash, which covers paymasterAndData. */
export async function signByAccount(env: LocalChain, op: UserOperation, owner: LocalAccount): Promise<UserOperation> {
  const userOpHash = await env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getUserOpHash",
    args: [op],
  });
  return { ...op, signature: await owner.signMessage({ message: { raw: userOpHash } }) };
}

export async function latestTimestamp(env: LocalChain): Promise<number> {
  return Number((await env.publicClient.getBlock()).timestamp);
}

/** Runs handleOps as a bundler would and returns the receipt; throws if the EntryPoint reverts. */
export async function handleOps(env: LocalChain, ops: UserOperation[]) {
  const bundler = env.wallet(anvilKeys.bundler);
  const hash = await bundler.writeContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "handleOps",
    args: [ops, bundler.account.address],
  });
  return env.publicClient.waitForTransactionReceipt({ hash });
}

/** The decoded custom error or revert string a call ended with; fails when the call does not revert. */
export async function revertOf(call: Promise<unknown>): Promise<{ errorName: string; args: readonly unknown[] }> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof BaseError)) throw new Error(`expected a revert, got ${String(error)}`);
  const reverted = error.walk((cause) => cause instanceof ContractFunctionRevertedError);
  if (!(reverted instanceof ContractFunctionRevertedError)) throw error;
  if (reverted.data) return { errorName: reverted.data.errorName, args: reverted.data.args ?? [] };
  if (reverted.reason !== undefined) return { errorName: "Error", args: [reverted.reason] };
  throw error;
}

/** handleOps through eth_call, as a bundler simulates a bundle before sending it. */
export function simulateBundle(env: LocalChain, ops: UserOperation[]) {
  const bundler = privateKeyToAccount(anvilKeys.bundler).address;
  return env.publicClient.simulateContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "handleOps",
    args: [ops, bundler],
    account: bundler,
  });
}

/** The EntryPoint's FailedOp(opIndex, reason) for a bundle. */
export function failedOpOf(env: LocalChain, ops: UserOperation[]) {
  return revertOf(simulateBundle(env, ops));
}
