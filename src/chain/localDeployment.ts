// Puts EntryPoint v0.6, SimpleAccountFactory and our VerifyingPaymaster on a local chain (anvil) at their deterministic
// addresses, and beside them the EntryPoint v0.7 and v0.8 stacks with our VerifyingPaymasterV07 for each. Every step skips what already has code, so a restarted service or a second test can call it again.
import {
  type Account,
  type Address,
  type Chain,
  concat,
  type Hex,
  isAddressEqual,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import type { LaterEntryPointVersion } from "../config";
import { verifyingPaymasterArtifact } from "./artifacts";
import {
  CREATE2_DEPLOYER_ADDRESS,
  CREATE2_SALT,
  type Create2Deployment,
  entryPointDeployment,
  localVerifyingPaymasterDeployment,
  localVerifyingPaymasterV07Deployments,
  simpleAccountFactoryDeployment,
} from "./deployments";
import { ENTRY_POINT_V06_ADDRESS } from "./entryPoint";
import { entryPointStack, simple7702AccountDeployment } from "./entryPointV07Deployments";

export interface ChainClients {
  publicClient: PublicClient;
  /** Pays for the deployments; for the signer rotation it must be the paymaster's owner. */
  walletClient: WalletClient<Transport, Chain | undefined, Account>;
}

export interface DeployOutcome {
  address: Address;
  /** False when code was already there and nothing was sent. */
  deployed: boolean;
  transactionHash?: Hex;
}

async function hasCode(publicClient: PublicClient, address: Address): Promise<boolean> {
  const code = await publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

async function confirm(publicClient: PublicClient, hash: Hex, what: string): Promise<void> {
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") throw new Error(`${what}: transaction ${hash} reverted`);
}

export async function deployCreate2(clients: ChainClients, deployment: Create2Deployment): Promise<DeployOutcome> {
  const { publicClient, walletClient } = clients;
  if (await hasCode(publicClient, deployment.address)) return { address: deployment.address, deployed: false };
  if (!(await hasCode(publicClient, CREATE2_DEPLOYER_ADDRESS))) {
    throw new Error(`no CREATE2 deployer at ${CREATE2_DEPLOYER_ADDRESS} on this chain (anvil predeploys it)`);
  }
  const hash = await walletClient.sendTransaction({
    account: walletClient.account,
    chain: walletClient.chain,
    to: CREATE2_DEPLOYER_ADDRESS,
    data: concat([deployment.salt ?? CREATE2_SALT, deployment.initCode]),
  });
  await confirm(publicClient, hash, `deploying ${deployment.name}`);
  // The deployer does not revert when the creation fails; only code at the computed address proves it worked.
  if (!(await hasCode(publicClient, deployment.address))) {
    throw new Error(`deploying ${deployment.name}: no code at ${deployment.address} after transaction ${hash}`);
  }
  return { address: deployment.address, deployed: true, transactionHash: hash };
}

/**
 * Gas each deployment of a batch may use, given rather than estimated so that a deployment can be sent before the one
 * it depends on is mined. EntryPoint v0.8, the largest, takes 5.0 million; a shortfall shows as missing code below.
 */
const BATCH_DEPLOYMENT_GAS = 8_000_000n;
const BATCH_PRIORITY_FEE = 1_000_000_000n;

/**
 * The same as deployCreate2 for several deployments, in order, in a few rounds of calls to the node instead of six calls
 * per deployment (they are most of a local chain's start): one look for code, the missing ones signed with consecutive
 * nonces and sent together, then their receipts and code checked together. Only for a chain whose account sends
 * nothing else meanwhile (the local chain).
 */
export async function deployCreate2Batch<Name extends string>(
  clients: ChainClients,
  deployments: Readonly<Record<Name, Create2Deployment>>,
): Promise<Record<Name, DeployOutcome>> {
  const { publicClient, walletClient } = clients;
  // Object keys keep their insertion order: the order of deployment.
  const entries = Object.entries(deployments) as [Name, Create2Deployment][];
  const present = await Promise.all(entries.map(([, deployment]) => hasCode(publicClient, deployment.address)));
  const missing = entries.filter((_, index) => !present[index]);
  const outcomes = Object.fromEntries(
    entries.map(([name, deployment]) => [name, { address: deployment.address, deployed: false }]),
  ) as Record<Name, DeployOutcome>;
  if (missing.length === 0) return outcomes;

  const { account } = walletClient;
  if (account.type !== "local") throw new Error("deploying a batch needs a local account: it signs the transactions");
  const [deployerPresent, chainId, nonce, block] = await Promise.all([
    hasCode(publicClient, CREATE2_DEPLOYER_ADDRESS),
    publicClient.getChainId(),
    publicClient.getTransactionCount({ address: account.address, blockTag: "pending" }),
    publicClient.getBlock(),
  ]);
  if (!deployerPresent) {
    throw new Error(`no CREATE2 deployer at ${CREATE2_DEPLOYER_ADDRESS} on this chain (anvil predeploys it)`);
  }
  const maxFeePerGas = 2n * (block.baseFeePerGas ?? 0n) + BATCH_PRIORITY_FEE;
  // Signed here and sent together: the node mines them in nonce order whatever order they arrive in.
  const signed = await Promise.all(
    missing.map(([, deployment], index) =>
      account.signTransaction({
        type: "eip1559",
        chainId,
        to: CREATE2_DEPLOYER_ADDRESS,
        data: concat([deployment.salt ?? CREATE2_SALT, deployment.initCode]),
        nonce: nonce + index,
        gas: BATCH_DEPLOYMENT_GAS,
        maxFeePerGas,
        maxPriorityFeePerGas: BATCH_PRIORITY_FEE,
      }),
    ),
  );
  const hashes = await Promise.all(
    signed.map((serializedTransaction) => publicClient.sendRawTransaction({ serializedTransaction })),
  );
  for (const [index, [name, deployment]] of missing.entries()) {
    outcomes[name] = { address: deployment.address, deployed: true, transactionHash: hashes[index] };
  }
  await Promise.all(
    missing.map(async ([name, deployment]) => {
      const hash = outcomes[name].transactionHash as Hex;
      await confirm(publicClient, hash, `deploying ${deployment.name}`);
      // As in deployCreate2: the deployer does not revert when the creation fails.
      if (!(await hasCode(publicClient, deployment.address))) {
        throw new Error(`deploying ${deployment.name}: no code at ${deployment.address} after transaction ${hash}`);
      }
    }),
  );
  return outcomes;
}

export async function deployEntryPoint(clients: ChainClients): Promise<DeployOutcome> {
  // Refuse rather than deploy an EntryPoint the service and every bundler would not look for.
  if (!isAddressEqual(entryPointDeployment.address, ENTRY_POINT_V06_ADDRESS)) {
    throw new Error(
      `EntryPoint artifact would land at ${entryPointDeployment.address}, not ${ENTRY_POINT_V06_ADDRESS}: not the mainnet bytecode`,
    );
  }
  return deployCreate2(clients, entryPointDeployment);
}

export function deploySimpleAccountFactory(clients: ChainClients): Promise<DeployOutcome> {
  return deployCreate2(clients, simpleAccountFactoryDeployment);
}

export function deployVerifyingPaymaster(clients: ChainClients): Promise<DeployOutcome> {
  return deployCreate2(clients, localVerifyingPaymasterDeployment);
}

export interface LocalStack {
  entryPoint: DeployOutcome;
  simpleAccountFactory: DeployOutcome;
  verifyingPaymaster: DeployOutcome;
}

/** In order: the factory and the paymaster are built against the EntryPoint's address. */
export async function deployLocalStack(clients: ChainClients): Promise<LocalStack> {
  const entryPoint = await deployEntryPoint(clients);
  const simpleAccountFactory = await deploySimpleAccountFactory(clients);
  const verifyingPaymaster = await deployVerifyingPaymaster(clients);
  return { entryPoint, simpleAccountFactory, verifyingPaymaster };
}

export interface LaterEntryPointStack {
  entryPoint: DeployOutcome;
  simpleAccountFactory: DeployOutcome;
  verifyingPaymaster: DeployOutcome;
  /** v0.8 only. */
  simple7702Account?: DeployOutcome;
}

/**
 * The EntryPoint of `version` with its SimpleAccountFactory (and for v0.8 Simple7702Account), then our paymaster for
 * it. In order: the v0.8 factory asks its EntryPoint for the SenderCreator in its constructor.
 */
export async function deployLaterEntryPointStack(
  clients: ChainClients,
  version: LaterEntryPointVersion,
): Promise<LaterEntryPointStack> {
  const { entryPoint, simpleAccountFactory } = entryPointStack(version);
  const verifyingPaymaster = localVerifyingPaymasterV07Deployments[version];
  return version === "0.8"
    ? deployCreate2Batch(clients, {
        entryPoint,
        simpleAccountFactory,
        simple7702Account: simple7702AccountDeployment(),
        verifyingPaymaster,
      })
    : deployCreate2Batch(clients, { entryPoint, simpleAccountFactory, verifyingPaymaster });
}

/**
 * Makes `newSigner` (the service's own key) the paymaster's verifying signer; nothing is sent when it already is.
 * The wallet client must be the owner, which on a local chain is anvil's first account.
 */
export async function rotateVerifyingSigner(
  clients: ChainClients,
  newSigner: Address,
  paymaster: Address = localVerifyingPaymasterDeployment.address,
): Promise<{ changed: boolean; transactionHash?: Hex }> {
  const { publicClient, walletClient } = clients;
  // verifyingSigner, owner and setVerifyingSigner read the same in VerifyingPaymasterV07: this serves both contracts.
  const contract = { address: paymaster, abi: verifyingPaymasterArtifact.abi } as const;
  const current = await publicClient.readContract({ ...contract, functionName: "verifyingSigner" });
  if (isAddressEqual(current, newSigner)) return { changed: false };
  const owner = await publicClient.readContract({ ...contract, functionName: "owner" });
  if (!isAddressEqual(owner, walletClient.account.address)) {
    throw new Error(`only the paymaster's owner ${owner} can rotate its signer, not ${walletClient.account.address}`);
  }
  const hash = await walletClient.writeContract({
    ...contract,
    functionName: "setVerifyingSigner",
    args: [newSigner],
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(publicClient, hash, "rotating the verifying signer");
  return { changed: true, transactionHash: hash };
}
