// Puts EntryPoint v0.6, SimpleAccountFactory and our VerifyingPaymaster on a local chain (anvil) at their deterministic
// addresses, and beside them the EntryPoint v0.7, v0.8 and v0.9 stacks with our verifying paymaster and both token
// paymasters (TokenPaymasterV07, PermitTokenPaymasterV07) for each. Every step skips what already has code, so a restarted service or a second test can call it again.
import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  type Hex,
  isAddressEqual,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../bindings/entryPoints/entryPoint";
import { SIGNER_CHANGE_GAS, signerSetAbi } from "../bindings/paymasters/signerSet";
import type { LaterEntryPointVersion } from "../config";
import {
  entryPointDeployment,
  localPermitTokenPaymasterV07Deployments,
  localTokenPaymasterV07Deployments,
  localVerifyingPaymasterDeployment,
  localVerifyingPaymasterV07Deployments,
  simpleAccountFactoryDeployment,
} from "./deployments";
import { entryPointStack, simple7702AccountDeployment } from "./entryPointV07Deployments";
import { entryPointV09Stack } from "./entryPointV09Deployments";
import { type BatchTransaction, confirm, deployCreate2Batch, sendTogether } from "./localBatch";
import {
  localPermitTokenPaymasterV09Deployment,
  localTokenPaymasterV09Deployment,
  localVerifyingPaymasterV09Deployment,
} from "./paymasterDeploymentsV09";

export interface ChainClients {
  publicClient: PublicClient;
  /** Pays for the deployments; for a change of the signer set it must be the paymaster's owner. */
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
  /** Our PermitTokenPaymasterV07 (ERC20 mode, charged up front); funded and staked the same way. */
  permitTokenPaymaster: DeployOutcome;
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
    permitTokenPaymasterV07: localPermitTokenPaymasterV07Deployments["0.7"],
    entryPointV08: v08.entryPoint,
    simpleAccountFactoryV08: v08.simpleAccountFactory,
    simple7702AccountV08: simple7702AccountDeployment(),
    verifyingPaymasterV08: localVerifyingPaymasterV07Deployments["0.8"],
    tokenPaymasterV08: localTokenPaymasterV07Deployments["0.8"],
    permitTokenPaymasterV08: localPermitTokenPaymasterV07Deployments["0.8"],
    entryPointV09: v09.entryPoint,
    simpleAccountFactoryV09: v09.simpleAccountFactory,
    simple7702AccountV09: v09.simple7702Account,
    verifyingPaymasterV09: localVerifyingPaymasterV09Deployment,
    tokenPaymasterV09: localTokenPaymasterV09Deployment,
    permitTokenPaymasterV09: localPermitTokenPaymasterV09Deployment,
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
      permitTokenPaymaster: outcomes.permitTokenPaymasterV07,
    },
    "0.8": {
      entryPoint: outcomes.entryPointV08,
      simpleAccountFactory: outcomes.simpleAccountFactoryV08,
      simple7702Account: outcomes.simple7702AccountV08,
      verifyingPaymaster: outcomes.verifyingPaymasterV08,
      tokenPaymaster: outcomes.tokenPaymasterV08,
      permitTokenPaymaster: outcomes.permitTokenPaymasterV08,
    },
    "0.9": {
      entryPoint: outcomes.entryPointV09,
      simpleAccountFactory: outcomes.simpleAccountFactoryV09,
      simple7702Account: outcomes.simple7702AccountV09,
      verifyingPaymaster: outcomes.verifyingPaymasterV09,
      tokenPaymaster: outcomes.tokenPaymasterV09,
      permitTokenPaymaster: outcomes.permitTokenPaymasterV09,
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

/**
 * addSignerIfNeeded for several paymasters at once (all four of ours inherit SignerSet): which ones lack the signer and
 * who owns them read together, the additions sent together. Returns the paymasters it changed.
 */
export async function addSignerToPaymasters(
  clients: ChainClients,
  signer: Address,
  paymasters: readonly Address[],
): Promise<Address[]> {
  const additions = await signerAdditions(clients, signer, paymasters);
  await sendTogether(clients, additions);
  return additions.map(({ to }) => to);
}

/**
 * The transactions addSignerToPaymasters sends, one per paymaster whose set does not hold `signer` yet, for a caller
 * that sends them together with others; refuses when the wallet client is not the owner of one of them.
 */
export async function signerAdditions(
  clients: ChainClients,
  signer: Address,
  paymasters: readonly Address[],
): Promise<BatchTransaction[]> {
  const { publicClient, walletClient } = clients;
  const states = await Promise.all(
    paymasters.map(async (address) => ({
      address,
      present: await publicClient.readContract({
        address,
        abi: signerSetAbi,
        functionName: "isSigner",
        args: [signer],
      }),
      owner: await publicClient.readContract({ address, abi: signerSetAbi, functionName: "owner" }),
    })),
  );
  const missing = states.filter(({ present }) => !present);
  for (const { address, owner } of missing) requireOwner(owner, walletClient.account.address, address);
  return missing.map(({ address }) => ({
    what: `adding ${signer} to the signers of ${address}`,
    to: address,
    data: encodeFunctionData({ abi: signerSetAbi, functionName: "addSigner", args: [signer] }),
    gas: SIGNER_CHANGE_GAS,
  }));
}

function requireOwner(owner: Address, caller: Address, paymaster: Address): void {
  if (!isAddressEqual(owner, caller)) {
    throw new Error(`only the paymaster's owner ${owner} can change the signers of ${paymaster}, not ${caller}`);
  }
}

/**
 * Adds `signer` (the service's own key) to the v0.6 verifying paymaster's signer set; nothing is sent when it is there
 * already. The wallet client must be the owner, which on a local chain is anvil's first account.
 */
export async function addVerifyingPaymasterSigner(
  clients: ChainClients,
  signer: Address,
  paymaster: Address = localVerifyingPaymasterDeployment.address,
): Promise<{ changed: boolean; transactionHash?: Hex }> {
  return addSignerIfNeeded(clients, paymaster, signer);
}

/** Adds `signer` to the paymaster's set as its owner; nothing is sent when the set holds it already. */
export async function addSignerIfNeeded(
  clients: ChainClients,
  paymaster: Address,
  signer: Address,
): Promise<{ changed: boolean; transactionHash?: Hex }> {
  const { publicClient, walletClient } = clients;
  const contract = { address: paymaster, abi: signerSetAbi } as const;
  if (await publicClient.readContract({ ...contract, functionName: "isSigner", args: [signer] })) {
    return { changed: false };
  }
  requireOwner(
    await publicClient.readContract({ ...contract, functionName: "owner" }),
    walletClient.account.address,
    paymaster,
  );
  const hash = await walletClient.writeContract({
    ...contract,
    functionName: "addSigner",
    args: [signer],
    account: walletClient.account,
    chain: walletClient.chain,
  });
  await confirm(publicClient, hash, `adding ${signer} to the signers of ${paymaster}`);
  return { changed: true, transactionHash: hash };
}
