// The local chain as the service starts it (src/devChain/localChain.ts), with its EntryPoint v0.7 and v0.8 stacks, and the
// steps of a sponsored operation from a permissionless account: the dApp's deposit, the operation with
// paymasterAndData signed by the service's key, the account's signature last, and the checks on what the EntryPoint
// and our paymaster did with it. How the operation reaches the EntryPoint (handleOps, a bundler) is the test's.
//
//   const env = await startLocalStacks();
//   const { userOperation, packed } = await prepareSponsored(env, "0.8", account);
//   ... send it ...
//   const outcome = checkSponsored(env, "0.8", prepared, logs, balanceAfter);
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  isAddressEqual,
  type Log,
  type PublicClient,
  parseAbi,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  slice,
  TransactionReceiptNotFoundError,
} from "viem";
import type { SmartAccount, UserOperation } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import {
  PAYMASTER_DATA_OFFSET,
  type PackedUserOperation,
  packAccountGasLimits,
  packGasFees,
  packInitCode,
} from "../../../src/bindings/entryPoints/packedUserOperation";
import { verifyingPaymasterV07Artifact } from "../../../src/bindings/paymasters/artifacts";
import {
  encodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
} from "../../../src/bindings/paymasters/paymasterAndDataV07";
import type { LaterEntryPointVersion } from "../../../src/config";
import { type LocalChain, startLocalChain } from "../../../src/devChain/localChain";
import { createSigner, type Signer } from "../../../src/signer/signer";
import { anvilKeys, type Wallet } from "../fixtures";

export interface LocalStacks {
  chain: LocalChain;
  viemChain: Chain;
  publicClient: PublicClient;
  wallet(key: Hex): Wallet;
  /** The service's key: the local chain made it every paymaster's verifying signer. */
  serviceSigner: Signer;
  /** Pays for every operation here. */
  fundingWallet: Address;
  stop(): Promise<void>;
}

export async function startLocalStacks(): Promise<LocalStacks> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-v07-stacks-"));
  const serviceSigner = createSigner(generatePrivateKey());
  const chain = await startLocalChain({ dataDir, signer: serviceSigner.address });
  const viemChain = defineChain({
    id: chain.info.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
  const transport = http(chain.rpcUrl);
  return {
    chain,
    viemChain,
    publicClient: createPublicClient({ chain: viemChain, transport, pollingInterval: 10 }),
    wallet: (key) =>
      createWalletClient({ account: privateKeyToAccount(key), chain: viemChain, transport, pollingInterval: 10 }),
    serviceSigner,
    fundingWallet: privateKeyToAccount(anvilKeys.fundingWallet).address,
    stop: async () => {
      await chain.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Every version's verifying paymaster takes deposits the same way. */
const depositForAbi = parseAbi(["function depositFor(address paymasterId) payable"]);

/**
 * Puts `value` into the funding wallet's balance in the verifying paymaster of each version named ("0.6": the chain's
 * own, the others: their stack's), one confirmed transaction each.
 */
export async function depositForFunding(
  env: LocalStacks,
  versions: readonly ("0.6" | LaterEntryPointVersion)[],
  value: bigint,
): Promise<void> {
  for (const version of versions) {
    const paymaster =
      version === "0.6" ? env.chain.info.verifyingPaymaster : env.chain.info.entryPoints[version].verifyingPaymaster;
    await confirm(
      env,
      env.wallet(anvilKeys.fundingWallet).writeContract({
        address: paymaster,
        abi: depositForAbi,
        functionName: "depositFor",
        args: [env.fundingWallet],
        value,
      }),
    );
  }
}

/** What a first operation is given; the paymaster's own limits are signed into paymasterAndData. */
const limits = {
  verificationGasLimit: 500_000n,
  callGasLimit: 100_000n,
  preVerificationGas: 100_000n,
  paymasterVerificationGasLimit: 100_000n,
  paymasterPostOpGasLimit: 60_000n,
};
const DEPOSIT = parseEther("0.1");

function paymasterOf(env: LocalStacks, version: LaterEntryPointVersion) {
  return {
    address: env.chain.info.entryPoints[version].verifyingPaymaster,
    abi: verifyingPaymasterV07Artifact.abi,
  } as const;
}

/**
 * The receipt of a transaction sent to the local chain, which must have succeeded. anvil mines on send, so the receipt
 * is asked for directly (a few times, should the node be slow to answer): viem's block watcher can wait out its whole
 * timeout for a transaction whose hash recurs after evm_revert, as the tests that replay one state send.
 */
export async function confirm(env: LocalStacks, request: Promise<Hex>) {
  const hash = await request;
  for (let attempt = 1; ; attempt++) {
    try {
      const receipt = await env.publicClient.getTransactionReceipt({ hash });
      assert.equal(receipt.status, "success");
      return receipt;
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError) || attempt === 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function dappBalance(env: LocalStacks, version: LaterEntryPointVersion): Promise<bigint> {
  return env.publicClient.readContract({
    ...paymasterOf(env, version),
    functionName: "getBalance",
    args: [env.fundingWallet],
  });
}

export interface PrepareOptions {
  /** EIP-7702: the EOA's signed delegation, carried by the operation (and by the bundle transaction). */
  authorization?: SignedAuthorization;
  /**
   * EIP-7702: send factory "0x7702" (the EntryPoint v0.8 marker) instead of none. viem packs it as the two bytes
   * 0x7702, and so does packInitCode: those two bytes are the initCode our paymaster's hash covers.
   */
  eip7702Marker?: boolean;
  /** The paymaster's own limits to sign instead of this file's (the service's, or a measured figure). */
  paymasterGas?: { paymasterVerificationGasLimit: bigint; paymasterPostOpGasLimit: bigint };
}

export interface PreparedOperation {
  sender: Address;
  /** The unpacked form bundlers take (eth_sendUserOperation), account signature included. */
  userOperation: UserOperation<"0.7" | "0.8">;
  /** The same operation as handleOps takes it. */
  packed: PackedUserOperation;
  balanceBefore: bigint;
}

/**
 * Funds the dApp's deposit, then builds the account's operation (a call sending nothing to a fresh address) with fixed
 * gas limits, sponsors it as the service will (its terms signed by the service's key, the 308 bytes of
 * paymasterAndData) and has the account sign last, over a hash that covers paymasterAndData.
 */
export async function prepareSponsored(
  env: LocalStacks,
  version: LaterEntryPointVersion,
  account: SmartAccount,
  options: PrepareOptions = {},
): Promise<PreparedOperation> {
  const paymaster = paymasterOf(env, version);
  const opLimits = { ...limits, ...options.paymasterGas };
  await depositForFunding(env, [version], DEPOSIT);
  const balanceBefore = await dappBalance(env, version);

  const sender = await account.getAddress();
  const factoryArgs = options.eip7702Marker
    ? { factory: "0x7702" as const, factoryData: "0x" as Hex }
    : await account.getFactoryArgs();
  const block = await env.publicClient.getBlock();
  const fees = {
    maxPriorityFeePerGas: 2_000_000_000n,
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + 2_000_000_000n,
  };
  const unsigned: PackedUserOperation = {
    sender,
    nonce: await account.getNonce(),
    initCode: packInitCode(factoryArgs.factory, factoryArgs.factoryData),
    callData: await account.encodeCalls([{ to: privateKeyToAccount(generatePrivateKey()).address, value: 0n }]),
    accountGasLimits: packAccountGasLimits(opLimits),
    preVerificationGas: opLimits.preVerificationGas,
    gasFees: packGasFees(fees),
    paymasterAndData: "0x",
    signature: "0x",
  };
  const terms = {
    chainId: env.viemChain.id,
    paymaster: paymaster.address,
    paymasterId: env.fundingWallet,
    validUntil: Number(block.timestamp) + 300,
    validAfter: 0,
    paymasterVerificationGasLimit: opLimits.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: opLimits.paymasterPostOpGasLimit,
  };
  const paymasterSignature = await env.serviceSigner.signHash(getVerifyingPaymasterHashV07(unsigned, terms));
  const paymasterAndData = encodeVerifyingPaymasterAndDataV07({ ...terms, signature: paymasterSignature });

  const userOperation: UserOperation<"0.7" | "0.8"> = {
    sender,
    nonce: unsigned.nonce,
    ...(factoryArgs.factory ? { factory: factoryArgs.factory, factoryData: factoryArgs.factoryData } : {}),
    callData: unsigned.callData,
    ...opLimits,
    ...fees,
    paymaster: paymaster.address,
    paymasterData: slice(paymasterAndData, PAYMASTER_DATA_OFFSET),
    signature: "0x",
    ...(options.authorization ? { authorization: options.authorization } : {}),
  };
  userOperation.signature = await account.signUserOperation(userOperation);
  return {
    sender,
    userOperation,
    packed: { ...unsigned, paymasterAndData, signature: userOperation.signature },
    balanceBefore,
  };
}

export interface SponsoredOutcome {
  charge: bigint;
  actualGasCost: bigint;
  actualGasUsed: bigint;
}

/**
 * From the bundle transaction's logs: the operation ran and succeeded under the version's EntryPoint, our paymaster
 * paid, and the dApp's deposit went down by what the paymaster charged, which is never less than the EntryPoint took.
 */
export async function checkSponsored(
  env: LocalStacks,
  version: LaterEntryPointVersion,
  prepared: PreparedOperation,
  logs: Log[],
): Promise<SponsoredOutcome> {
  const paymaster = paymasterOf(env, version);
  const events = parseEventLogs({ abi: entryPointV07Abi, logs, eventName: "UserOperationEvent" }).filter((event) =>
    isAddressEqual(event.args.sender, prepared.sender),
  );
  const [event, ...others] = events;
  assert.ok(event && others.length === 0, "one UserOperationEvent for the sender");
  assert.ok(isAddressEqual(event.address, env.chain.info.entryPoints[version].entryPoint), "the version's EntryPoint");
  assert.equal(event.args.success, true);
  assert.ok(isAddressEqual(event.args.paymaster, paymaster.address), "our paymaster paid");

  const charges = parseEventLogs({ abi: paymaster.abi, logs, eventName: "GasCharged" }).filter(
    (charged) => charged.args.userOpHash === event.args.userOpHash,
  );
  const [charged] = charges;
  assert.ok(charged && charges.length === 1, "the paymaster charged the operation once");
  assert.ok(isAddressEqual(charged.args.paymasterId, env.fundingWallet), "to the dApp's funding wallet");
  const balanceAfter = await dappBalance(env, version);
  assert.equal(
    prepared.balanceBefore - balanceAfter,
    charged.args.charge,
    "the dApp's deposit went down by the charge",
  );
  assert.ok(charged.args.charge >= event.args.actualGasCost, `${charged.args.charge} >= ${event.args.actualGasCost}`);
  return {
    charge: charged.args.charge,
    actualGasCost: event.args.actualGasCost,
    actualGasUsed: event.args.actualGasUsed,
  };
}
