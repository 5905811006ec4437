// The EntryPoint v0.7 and v0.8 stacks of the local chain, started as the service starts it (src/chain/localChain.ts),
// used the way a wallet would: permissionless 0.4.1 builds the account (at its default factory, which must be ours)
// and signs the operation, the service's encoder and key sign paymasterAndData, and an anvil account sends handleOps
// as a bundler would. For v0.8 also an EOA delegated with EIP-7702 to Simple7702Account, its authorization in the
// handleOps transaction. Proves on chain: the operation succeeds, our paymaster paid, and the dApp's deposit was charged.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { to7702SimpleSmartAccount, toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  type Chain,
  concat,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  isAddressEqual,
  type PublicClient,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  slice,
} from "viem";
import type { SmartAccount, UserOperation } from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { verifyingPaymasterV07Artifact } from "../../../src/chain/artifacts";
import { entryPointV07Abi } from "../../../src/chain/entryPointV07";
import { LOCAL_ENTRY_POINT_STACKS } from "../../../src/chain/localAddresses";
import { type LocalChain, startLocalChain } from "../../../src/chain/localChain";
import {
  type PackedUserOperation,
  packAccountGasLimits,
  packGasFees,
  packInitCode,
} from "../../../src/chain/packedUserOperation";
import {
  encodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
  PAYMASTER_DATA_OFFSET,
} from "../../../src/chain/paymasterAndDataV07";
import { createSigner } from "../../../src/chain/signer";
import type { LaterEntryPointVersion } from "../../../src/config";
import { anvilKeys, type Wallet } from "../fixtures";

const serviceSigner = createSigner(generatePrivateKey());
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet);
const bundler = privateKeyToAccount(anvilKeys.bundler);
/** What a first operation is given; the paymaster's own limits are signed into paymasterAndData. */
const limits = {
  verificationGasLimit: 500_000n,
  callGasLimit: 100_000n,
  preVerificationGas: 60_000n,
  paymasterVerificationGasLimit: 100_000n,
  paymasterPostOpGasLimit: 60_000n,
};
const DEPOSIT = parseEther("0.1");

let dataDir: string;
let chain: LocalChain;
let publicClient: PublicClient;
let local: Chain;

before(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-v07-stacks-"));
  chain = await startLocalChain({ dataDir, signer: serviceSigner.address });
  local = defineChain({
    id: chain.info.chainId,
    name: "local",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [chain.rpcUrl] } },
  });
  publicClient = createPublicClient({ chain: local, transport: http(chain.rpcUrl), pollingInterval: 10 });
});
after(async () => {
  await chain?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const wallet = (key: Hex): Wallet =>
  createWalletClient({
    account: privateKeyToAccount(key),
    chain: local,
    transport: http(chain.rpcUrl),
    pollingInterval: 10,
  });

async function send(request: Promise<Hex>) {
  const receipt = await publicClient.waitForTransactionReceipt({ hash: await request });
  assert.equal(receipt.status, "success");
  return receipt;
}

function paymasterOf(version: LaterEntryPointVersion) {
  return {
    address: chain.info.entryPoints[version].verifyingPaymaster,
    abi: verifyingPaymasterV07Artifact.abi,
  } as const;
}

/**
 * What the service will do for the operation: sign its terms with the local chain's signer (the service's key) and lay
 * out the 308 bytes of paymasterAndData; the dApp pays through its funding wallet's deposit.
 */
async function sponsor(version: LaterEntryPointVersion, op: PackedUserOperation): Promise<Hex> {
  const { timestamp } = await publicClient.getBlock();
  const terms = {
    chainId: local.id,
    paymaster: chain.info.entryPoints[version].verifyingPaymaster,
    paymasterId: fundingWallet.address,
    validUntil: Number(timestamp) + 300,
    validAfter: 0,
    paymasterVerificationGasLimit: limits.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: limits.paymasterPostOpGasLimit,
  };
  const signature = await serviceSigner.signHash(getVerifyingPaymasterHashV07(op, terms));
  return encodeVerifyingPaymasterAndDataV07({ ...terms, signature });
}

interface Outcome {
  sender: Address;
  charge: bigint;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  transactionGas: bigint;
}

/**
 * One sponsored operation of `account` (a call sending nothing to a fresh address), sent with handleOps from anvil's
 * bundler account; `authorization` goes into that transaction for an EIP-7702 account.
 */
async function runSponsored(
  version: LaterEntryPointVersion,
  account: SmartAccount,
  authorization?: SignedAuthorization,
): Promise<Outcome> {
  const paymaster = paymasterOf(version);
  const entryPoint = chain.info.entryPoints[version].entryPoint;
  await send(
    wallet(anvilKeys.fundingWallet).writeContract({
      ...paymaster,
      functionName: "depositFor",
      args: [fundingWallet.address],
      value: DEPOSIT,
    }),
  );
  const balanceBefore = await publicClient.readContract({
    ...paymaster,
    functionName: "getBalance",
    args: [fundingWallet.address],
  });

  const sender = await account.getAddress();
  const { factory, factoryData } = await account.getFactoryArgs();
  const block = await publicClient.getBlock();
  const fees = {
    maxPriorityFeePerGas: 1_000_000_000n,
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + 1_000_000_000n,
  };
  const unsigned: PackedUserOperation = {
    sender,
    nonce: await account.getNonce(),
    initCode: packInitCode(factory, factoryData),
    callData: await account.encodeCalls([{ to: privateKeyToAccount(generatePrivateKey()).address, value: 0n }]),
    accountGasLimits: packAccountGasLimits(limits),
    preVerificationGas: limits.preVerificationGas,
    gasFees: packGasFees(fees),
    paymasterAndData: "0x",
    signature: "0x",
  };
  const paymasterAndData = await sponsor(version, unsigned);
  // The account signs last, over a hash that covers paymasterAndData; permissionless takes the unpacked form.
  const userOperation: UserOperation<typeof version> = {
    sender,
    nonce: unsigned.nonce,
    ...(factory ? { factory, factoryData } : {}),
    callData: unsigned.callData,
    ...limits,
    ...fees,
    paymaster: paymaster.address,
    paymasterData: slice(paymasterAndData, PAYMASTER_DATA_OFFSET),
    signature: "0x",
  };
  const signature = await account.signUserOperation(userOperation);
  const op = { ...unsigned, paymasterAndData, signature };

  const receipt = await send(
    wallet(anvilKeys.bundler).writeContract({
      address: entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[op], bundler.address],
      ...(authorization ? { authorizationList: [authorization] } : {}),
    }),
  );
  const [event, ...others] = parseEventLogs({
    abi: entryPointV07Abi,
    logs: receipt.logs,
    eventName: "UserOperationEvent",
  });
  assert.ok(event && others.length === 0, "one UserOperationEvent");
  assert.ok(isAddressEqual(event.address, entryPoint), "emitted by the version's EntryPoint");
  assert.equal(event.args.success, true);
  assert.ok(isAddressEqual(event.args.paymaster, paymaster.address), "our paymaster paid");
  assert.ok(isAddressEqual(event.args.sender, sender));

  const [charged] = parseEventLogs({ abi: paymaster.abi, logs: receipt.logs, eventName: "GasCharged" });
  assert.ok(charged, "the paymaster charged the dApp");
  assert.ok(isAddressEqual(charged.args.paymasterId, fundingWallet.address));
  const balanceAfter = await publicClient.readContract({
    ...paymaster,
    functionName: "getBalance",
    args: [fundingWallet.address],
  });
  assert.equal(balanceBefore - balanceAfter, charged.args.charge, "the dApp's deposit went down by the charge");
  // Never less than the EntryPoint took from the paymaster's deposit for the operation.
  assert.ok(charged.args.charge >= event.args.actualGasCost, `${charged.args.charge} >= ${event.args.actualGasCost}`);
  return {
    sender,
    charge: charged.args.charge,
    actualGasCost: event.args.actualGasCost,
    actualGasUsed: event.args.actualGasUsed,
    transactionGas: receipt.gasUsed,
  };
}

function report(t: { diagnostic(message: string): void }, outcome: Outcome) {
  t.diagnostic(
    `handleOps gas ${outcome.transactionGas}, operation actualGasUsed ${outcome.actualGasUsed}, actualGasCost ` +
      `${outcome.actualGasCost} wei, dApp charged ${outcome.charge} wei`,
  );
}

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: a permissionless SimpleAccount at the default factory runs a sponsored first operation`, async (t) => {
    const account = await toSimpleSmartAccount({
      client: publicClient,
      owner: privateKeyToAccount(generatePrivateKey()),
      entryPoint: { address: chain.info.entryPoints[version].entryPoint, version },
    });
    // permissionless found the factory the local chain deployed: the account deploys through initCode.
    const { factory } = await account.getFactoryArgs();
    assert.equal(factory, LOCAL_ENTRY_POINT_STACKS[version].simpleAccountFactory);
    const outcome = await runSponsored(version, account);
    assert.notEqual(await publicClient.getCode({ address: outcome.sender }), undefined, "the account was deployed");
    report(t, outcome);
  });
}

test("EntryPoint v0.8: an EOA delegated to Simple7702Account in the same transaction runs a sponsored operation", async (t) => {
  const owner = privateKeyToAccount(generatePrivateKey());
  const account = await to7702SimpleSmartAccount({
    client: publicClient,
    owner,
    entryPoint: { address: chain.info.entryPoints["0.8"].entryPoint, version: "0.8" },
  });
  const implementation = LOCAL_ENTRY_POINT_STACKS["0.8"].simple7702Account;
  assert.ok(implementation);
  assert.equal(account.address, owner.address, "the account is the EOA itself");
  // The EOA has no ether: its authorization rides in the bundler's transaction, and the paymaster pays for gas.
  const authorization = await owner.signAuthorization({
    address: implementation,
    chainId: local.id,
    nonce: await publicClient.getTransactionCount({ address: owner.address }),
  });
  const outcome = await runSponsored("0.8", account, authorization);
  assert.equal(
    await publicClient.getCode({ address: owner.address }),
    concat(["0xef0100", implementation.toLowerCase() as Address]),
    "the EOA now delegates to Simple7702Account",
  );
  assert.equal(await publicClient.getBalance({ address: owner.address }), 0n);
  report(t, outcome);
});
