// A local chain with the real EntryPoint v0.7 or v0.8 at its canonical address, its SimpleAccountFactory, and our
// VerifyingPaymasterV07 deployed against it; and the steps of building a sponsored PackedUserOperation: gas fields,
// then paymasterAndData (signed by the service), then the account's own signature (which covers it).
import { type Address, concat, encodeFunctionData, getAddress, type Hex, parseGwei } from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import {
  type PackedUserOperation,
  packAccountGasLimits,
  packGasFees,
} from "../../../src/bindings/entryPoints/packedUserOperation";
import { verifyingPaymasterV07Artifact } from "../../../src/bindings/paymasters/artifacts";
import {
  encodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
} from "../../../src/bindings/paymasters/paymasterAndDataV07";
import type { EntryPointVersion } from "../../../src/devChain/entryPointV07Deployments";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../../src/devChain/simpleAccount";
import { createSigner, type Signer } from "../../../src/signer/signer";
import type { AnvilOptions } from "../../helpers/anvil";
import { deployEntryPointStack } from "../../helpers/entryPointsV07";
import { anvilKeys, type LocalChain, revertOf, type SponsorOptions, startLocalChain } from "../fixtures";

export interface SponsoredV07 extends LocalChain {
  version: EntryPointVersion;
  entryPoint: Address;
  factory: Address;
  paymaster: Address;
  serviceSigner: Signer;
  serviceKey: Hex;
}

export async function startSponsoredChainV07(
  version: EntryPointVersion,
  options: AnvilOptions = {},
): Promise<SponsoredV07> {
  const local = await startLocalChain(options);
  try {
    const stack = await deployEntryPointStack(local, anvilKeys.owner, version);
    const owner = local.wallet(anvilKeys.owner);
    const deployHash = await owner.deployContract({
      abi: verifyingPaymasterV07Artifact.abi,
      bytecode: verifyingPaymasterV07Artifact.bytecode,
      args: [stack.entryPoint.address, owner.account.address],
    });
    const { contractAddress } = await local.publicClient.waitForTransactionReceipt({ hash: deployHash });
    if (!contractAddress) throw new Error("VerifyingPaymasterV07 did not deploy");
    const serviceKey = generatePrivateKey();
    const serviceSigner = createSigner(serviceKey);
    const addSigner = await owner.writeContract({
      address: contractAddress,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "addSigner",
      args: [serviceSigner.address],
    });
    await local.publicClient.waitForTransactionReceipt({ hash: addSigner });
    return {
      ...local,
      version,
      entryPoint: stack.entryPoint.address,
      factory: stack.simpleAccountFactory.address,
      paymaster: getAddress(contractAddress),
      serviceSigner,
      serviceKey,
    };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

export type GasLimitsV07 = Record<
  | "verificationGasLimit"
  | "callGasLimit"
  | "preVerificationGas"
  | "paymasterVerificationGasLimit"
  | "paymasterPostOpGasLimit",
  bigint
>;

/** Generous for a first operation that deploys its account; the paymaster's validation and postOp need far less. */
export const gasLimitsV07: Readonly<GasLimitsV07> = {
  verificationGasLimit: 500_000n,
  callGasLimit: 100_000n,
  preVerificationGas: 50_000n,
  paymasterVerificationGasLimit: 100_000n,
  paymasterPostOpGasLimit: 50_000n,
};

/** A packed operation before sponsorship, with its gas values still apart for the tests' arithmetic. */
export interface DraftV07 {
  op: PackedUserOperation;
  owner: PrivateKeyAccount;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** The EntryPoint's prefund (maxCost in validatePaymasterUserOp) for an operation with gasLimitsV07-style limits. */
export function maxCostOf(limits: GasLimitsV07, maxFeePerGas: bigint): bigint {
  return (
    (limits.verificationGasLimit +
      limits.callGasLimit +
      limits.paymasterVerificationGasLimit +
      limits.paymasterPostOpGasLimit +
      limits.preVerificationGas) *
    maxFeePerGas
  );
}

/** A first operation of a fresh SimpleAccount: initCode deploys it, callData runs `execute(to, value, data)`. */
export async function newAccountOperationV07(
  env: SponsoredV07,
  call: { to: Address; value: bigint; data?: Hex },
  limits: Partial<GasLimitsV07> = {},
): Promise<DraftV07> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const gas = { ...gasLimitsV07, ...limits };
  const sender = await env.publicClient.readContract({
    address: env.factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  const block = await env.publicClient.getBlock();
  const maxPriorityFeePerGas = parseGwei("1");
  // Above base fee + tip, so the EntryPoint prices gas at base fee + tip and postOp must follow that fee, not the max.
  const maxFeePerGas = 2n * (block.baseFeePerGas ?? 0n) + maxPriorityFeePerGas;
  const op: PackedUserOperation = {
    sender,
    nonce: 0n,
    initCode: concat([
      env.factory,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner.address, 0n] }),
    ]),
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: "execute",
      args: [call.to, call.value, call.data ?? "0x"],
    }),
    accountGasLimits: packAccountGasLimits(gas),
    preVerificationGas: gas.preVerificationGas,
    gasFees: packGasFees({ maxPriorityFeePerGas, maxFeePerGas }),
    paymasterAndData: "0x",
    signature: "0x",
  };
  return { op, owner, maxFeePerGas, maxPriorityFeePerGas };
}

/** v0.6's terms, and the paymaster's own gas limits, which v0.7 signs too. */
export interface SponsorOptionsV07 extends SponsorOptions {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

/** What the service does: hash the operation with its terms, sign, and lay out paymasterAndData. */
export async function sponsorV07(op: PackedUserOperation, options: SponsorOptionsV07): Promise<PackedUserOperation> {
  const signature = await options.signer.signHash(getVerifyingPaymasterHashV07(op, options));
  return { ...op, paymasterAndData: encodeVerifyingPaymasterAndDataV07({ ...options, signature }) };
}

/**
 * What the steps below need of a chain: its clients, and the EntryPoint of the version the operation is for. Both the
 * verifying and the token paymaster's chains have it, so the steps serve both.
 */
export type EntryPointChainV07 = Pick<SponsoredV07, "publicClient" | "wallet" | "entryPoint" | "version">;

/**
 * The account's signature last, over the EntryPoint's userOpHash (which covers paymasterAndData): SimpleAccount 0.7
 * checks an EIP-191 signature of it, SimpleAccount 0.8 a raw one (the v0.8 hash is already EIP-712 typed data).
 */
export async function signByAccountV07(
  env: EntryPointChainV07,
  op: PackedUserOperation,
  owner: PrivateKeyAccount,
): Promise<PackedUserOperation> {
  const userOpHash = await env.publicClient.readContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "getUserOpHash",
    args: [op],
  });
  const signature =
    env.version === "0.7"
      ? await owner.signMessage({ message: { raw: userOpHash } })
      : await owner.sign({ hash: userOpHash });
  return { ...op, signature };
}

/** Runs handleOps as a bundler would, paying `beneficiary`, and returns the receipt; throws if the EntryPoint reverts. */
export async function handleOpsV07(env: EntryPointChainV07, ops: PackedUserOperation[], beneficiary: Address) {
  const hash = await env.wallet(anvilKeys.bundler).writeContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [ops, beneficiary],
  });
  return env.publicClient.waitForTransactionReceipt({ hash });
}

/** handleOps through eth_call, as a bundler simulates a bundle before sending it. */
export function simulateOpsV07(env: EntryPointChainV07, ops: PackedUserOperation[]) {
  const bundler = privateKeyToAccount(anvilKeys.bundler).address;
  return env.publicClient.simulateContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [ops, bundler],
    account: bundler,
  });
}

/** The EntryPoint's FailedOp / FailedOpWithRevert for a bundle, from handleOps through eth_call. */
export function failedOpOfV07(env: EntryPointChainV07, ops: PackedUserOperation[]) {
  return revertOf(simulateOpsV07(env, ops));
}
