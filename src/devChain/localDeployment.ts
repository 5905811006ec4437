// Puts EntryPoint v0.6, SimpleAccountFactory and our VerifyingPaymaster on a local chain (anvil) at their deterministic
// addresses, and beside them the EntryPoint v0.7 and v0.8 stacks with our VerifyingPaymasterV07 and TokenPaymasterV07
// for each. Every step skips what already has code, so a restarted service or a second test can call it again.
import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  isAddressEqual,
  type PublicClient,
  parseAbi,
  type Transport,
  type WalletClient,
} from "viem";
import type { LaterEntryPointVersion } from "../config";
import { ENTRY_POINT_V06_ADDRESS } from "../sponsorship/entryPoints/entryPoint";
import { verifyingPaymasterArtifact } from "../sponsorship/paymasters/artifacts";
import {
  entryPointDeployment,
  localTokenPaymasterV07Deployments,
  localVerifyingPaymasterDeployment,
  localVerifyingPaymasterV07Deployments,
  simpleAccountFactoryDeployment,
} from "./deployments";
import { entryPointStack, simple7702AccountDeployment } from "./entryPointV07Deployments";
import { entryPointV09Stack } from "./entryPointV09Deployments";
import { type BatchTransaction, confirm, deployCreate2Batch, sendTogether } from "./localBatch";
import { localTokenPaymasterV09Deployment, localVerifyingPaymasterV09Deployment } from "./paymasterDeploymentsV09";

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

/** Refuses rather than deploy an EntryPoint the service and every bundler would not look for. */
export function checkEntryPointArtifact(): void {
  if (!isAddressEqual(entryPointDeployment.address, ENTRY_POINT_V06_ADDRESS)) {
    throw new Error(
      `EntryPoint artifact would land at ${entryPointDeployment.address}, not ${ENTRY_POINT_V06_ADDRESS}: not the mainnet bytecode`,
    );
  }
}

export interface LocalStack {
  entryPoint: DeployOutcome;
  simpleAccountFactory: DeployOutcome;
  verifyingPaymaster: DeployOutcome;
}

/** In order: the factory and the paymaster are built against the EntryPoint's address. */
const localStackDeployments = () =>
  ({
    entryPoint: entryPointDeployment,
    simpleAccountFactory: simpleAccountFactoryDeployment,
    verifyingPaymaster: localVerifyingPaymasterDeployment,
  }) as const;

/** Sent together, in order (see localStackDeployments). */
export async function deployLocalStack(clients: ChainClients): Promise<LocalStack> {
  checkEntryPointArtifact();
  return deployCreate2Batch(clients, localStackDeployments());
}

export interface LaterEntryPointStack {
  entryPoint: DeployOutcome;
  simpleAccountFactory: DeployOutcome;
  verifyingPaymaster: DeployOutcome;
  /** Our TokenPaymasterV07 (ERC20 mode); localTokenPaymastersV07.ts funds and stakes it. */
  tokenPaymaster: DeployOutcome;
  /** v0.8 and v0.9. */
  simple7702Account?: DeployOutcome;
}

/**
 * Each EntryPoint with its SimpleAccountFactory (and for v0.8 and v0.9 Simple7702Account), then our verifying and token
 * paymasters for it. In order: the v0.8 factory asks its EntryPoint for the SenderCreator in its constructor.
 */
function laterStackDeployments() {
  const [v07, v08, v09] = [entryPointStack("0.7"), entryPointStack("0.8"), entryPointV09Stack()];
  return {
    entryPointV07: v07.entryPoint,
    simpleAccountFactoryV07: v07.simpleAccountFactory,
    verifyingPaymasterV07: localVerifyingPaymasterV07Deployments["0.7"],
    tokenPaymasterV07: localTokenPaymasterV07Deployments["0.7"],
    entryPointV08: v08.entryPoint,
    simpleAccountFactoryV08: v08.simpleAccountFactory,
    simple7702AccountV08: simple7702AccountDeployment(),
    verifyingPaymasterV08: localVerifyingPaymasterV07Deployments["0.8"],
    tokenPaymasterV08: localTokenPaymasterV07Deployments["0.8"],
    entryPointV09: v09.entryPoint,
    simpleAccountFactoryV09: v09.simpleAccountFactory,
    simple7702AccountV09: v09.simple7702Account,
    verifyingPaymasterV09: localVerifyingPaymasterV09Deployment,
    tokenPaymasterV09: localTokenPaymasterV09Deployment,
  } as const;
}

function laterStacks(
  outcomes: Record<keyof ReturnType<typeof laterStackDeployments>, DeployOutcome>,
): Record<LaterEntryPointVersion, LaterEntryPointStack> {
  return {
    "0.7": {
      entryPoint: outcomes.entryPointV07,
      simpleAccountFactory: outcomes.simpleAccountFactoryV07,
      verifyingPaymaster: outcomes.verifyingPaymasterV07,
      tokenPaymaster: outcomes.tokenPaymasterV07,
    },
    "0.8": {
      entryPoint: outcomes.entryPointV08,
      simpleAccountFactory: outcomes.simpleAccountFactoryV08,
      simple7702Account: outcomes.simple7702AccountV08,
      verifyingPaymaster: outcomes.verifyingPaymasterV08,
      tokenPaymaster: outcomes.tokenPaymasterV08,
    },
    "0.9": {
      entryPoint: outcomes.entryPointV09,
      simpleAccountFactory: outcomes.simpleAccountFactoryV09,
      simple7702Account: outcomes.simple7702AccountV09,
      verifyingPaymaster: outcomes.verifyingPaymasterV09,
      tokenPaymaster: outcomes.tokenPaymasterV09,
    },
  };
}

/** The EntryPoint v0.7 and v0.8 stacks (laterStackDeployments), all sent together. */
export async function deployLaterEntryPointStacks(
  clients: ChainClients,
): Promise<Record<LaterEntryPointVersion, LaterEntryPointStack>> {
  return laterStacks(await deployCreate2Batch(clients, laterStackDeployments()));
}

/** deployLocalStack and deployLaterEntryPointStacks as one batch: the local chain's start, one round trip fewer. */
export async function deployAllLocalStacks(
  clients: ChainClients,
): Promise<{ stack: LocalStack; later: Record<LaterEntryPointVersion, LaterEntryPointStack> }> {
  checkEntryPointArtifact();
  const { entryPoint, simpleAccountFactory, verifyingPaymaster, ...later } = await deployCreate2Batch(clients, {
    ...localStackDeployments(),
    ...laterStackDeployments(),
  });
  return { stack: { entryPoint, simpleAccountFactory, verifyingPaymaster }, later: laterStacks(later) };
}

/** setVerifyingSigner writes one slot and emits one event: well under this. */
const ROTATION_GAS = 100_000n;

/**
 * rotateVerifyingSigner for several paymasters at once (v0.6's, VerifyingPaymasterV07 and TokenPaymasterV07 read and
 * set their signer alike): their signers and owners read together, the changes sent together. Returns the paymasters
 * it changed.
 */
export async function rotateVerifyingSigners(
  clients: ChainClients,
  newSigner: Address,
  paymasters: readonly Address[],
): Promise<Address[]> {
  const rotations = await signerRotations(clients, newSigner, paymasters);
  await sendTogether(clients, rotations);
  return rotations.map(({ to }) => to);
}

/**
 * The transactions rotateVerifyingSigners sends, one per paymaster whose signer is not `newSigner` yet, for a caller
 * that sends them together with others; refuses when the wallet client is not the owner of one of them.
 */
export async function signerRotations(
  clients: ChainClients,
  newSigner: Address,
  paymasters: readonly Address[],
): Promise<BatchTransaction[]> {
  const { publicClient, walletClient } = clients;
  const read = (address: Address, functionName: "verifyingSigner" | "owner") =>
    publicClient.readContract({ address, abi: verifyingPaymasterArtifact.abi, functionName });
  const states = await Promise.all(
    paymasters.map(async (address) => ({
      address,
      signer: await read(address, "verifyingSigner"),
      owner: await read(address, "owner"),
    })),
  );
  const stale = states.filter(({ signer }) => !isAddressEqual(signer, newSigner));
  for (const { address, owner } of stale) {
    if (!isAddressEqual(owner, walletClient.account.address)) {
      throw new Error(
        `only the paymaster's owner ${owner} can rotate the signer of ${address}, not ${walletClient.account.address}`,
      );
    }
  }
  return stale.map(({ address }) => ({
    what: `rotating the verifying signer of ${address}`,
    to: address,
    data: encodeFunctionData({
      abi: verifyingPaymasterArtifact.abi,
      functionName: "setVerifyingSigner",
      args: [newSigner],
    }),
    gas: ROTATION_GAS,
  }));
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
  return setVerifyingSignerIfNeeded(clients, paymaster, newSigner, "rotating the verifying signer");
}

/** The signer functions every paymaster of ours has (both verifying paymasters and both token paymasters). */
const signerAbi = parseAbi([
  "function verifyingSigner() view returns (address)",
  "function owner() view returns (address)",
  "function setVerifyingSigner(address signer)",
]);

/** Sets the paymaster's verifying signer as its owner; nothing is sent when it already is `newSigner`. */
export async function setVerifyingSignerIfNeeded(
  clients: ChainClients,
  paymaster: Address,
  newSigner: Address,
  what: string,
): Promise<{ changed: boolean; transactionHash?: Hex }> {
  const { publicClient, walletClient } = clients;
  const contract = { address: paymaster, abi: signerAbi } as const;
  const current = await publicClient.readContract({ ...contract, functionName: "verifyingSigner" });
  if (isAddressEqual(current, newSigner)) return { changed: false };
  const owner = await publicClient.readContract({ ...contract, functionName: "owner" });
  if (!isAddressEqual(owner, walletClient.account.address)) {
    throw new Error(
      `only the paymaster's owner ${owner} can rotate the signer of ${paymaster}, not ${walletClient.account.address}`,
    );
  }
  const hash = await walletClient.writeContract({
    ...contract,
    functionName: "setVerifyingSigner",
    args: [newSigner],
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(publicClient, hash, what);
  return { changed: true, transactionHash: hash };
}
