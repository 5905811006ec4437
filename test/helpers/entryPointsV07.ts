// Deploys the real EntryPoint v0.7 or v0.8 and its SimpleAccountFactory on a local chain, at their canonical
// addresses, through the CREATE2 deployer anvil predeploys (its call data is salt ++ initCode).
//
//   const stack = await deployEntryPointStack(env, "0.8");
//   stack.entryPoint.address === ENTRY_POINT_V08_ADDRESS
import { type Account, type Chain, concat, type Hex, type PublicClient, type Transport, type WalletClient } from "viem";
import { CREATE2_DEPLOYER_ADDRESS } from "../../src/devChain/deployments";
import {
  type EntryPointStack,
  type EntryPointVersion,
  entryPointStack,
  type SaltedDeployment,
  simple7702AccountDeployment,
} from "../../src/devChain/entryPointV07Deployments";

export interface DeployTarget {
  publicClient: PublicClient;
  wallet(key: Hex): WalletClient<Transport, Chain, Account>;
}

/** Sends salt ++ initCode to the CREATE2 deployer unless the code is there already; fails if nothing lands. */
async function deploySalted(target: DeployTarget, key: Hex, deployment: SaltedDeployment): Promise<void> {
  const existing = await target.publicClient.getCode({ address: deployment.address });
  if (existing !== undefined && existing !== "0x") return;
  const hash = await target.wallet(key).sendTransaction({
    to: CREATE2_DEPLOYER_ADDRESS,
    data: concat([deployment.salt, deployment.initCode]),
  });
  const receipt = await target.publicClient.waitForTransactionReceipt({ hash });
  const code = await target.publicClient.getCode({ address: deployment.address });
  if (receipt.status !== "success" || code === undefined || code === "0x") {
    throw new Error(`${deployment.name} did not deploy at ${deployment.address} (transaction ${receipt.status})`);
  }
}

/** The EntryPoint and SimpleAccountFactory of `version`; for v0.8 also Simple7702Account. */
export async function deployEntryPointStack(
  target: DeployTarget,
  key: Hex,
  version: EntryPointVersion,
): Promise<EntryPointStack> {
  const stack = entryPointStack(version);
  const deployments = version === "0.8" ? [...stack.deployments, simple7702AccountDeployment()] : stack.deployments;
  for (const deployment of deployments) await deploySalted(target, key, deployment);
  return stack;
}
