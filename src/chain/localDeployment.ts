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
  const stack = entryPointStack(version);
  const entryPoint = await deployCreate2(clients, stack.entryPoint);
  const simpleAccountFactory = await deployCreate2(clients, stack.simpleAccountFactory);
  const simple7702Account =
    version === "0.8" ? { simple7702Account: await deployCreate2(clients, simple7702AccountDeployment()) } : {};
  const verifyingPaymaster = await deployCreate2(clients, localVerifyingPaymasterV07Deployments[version]);
  return { entryPoint, simpleAccountFactory, ...simple7702Account, verifyingPaymaster };
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
