// The smart accounts wallets use, on the local chain at the addresses their client libraries look for by default (one
// file per family beside this one; their data in contracts/accounts/). Deployed after the EntryPoints, all in one batch
// of the deployer's transactions once the factories they go through are there (accountDeployers.ts). Every step skips
// what the chain already has, so a restart from saved state sends nothing.
import type { Address } from "viem";
import { ensureAccountDeployers } from "./accountDeployers";
import { type AccountContractDeployment, type AccountFamily, deploymentCallData } from "./accountDeploymentData";
import { coinbaseSmartWalletFamily } from "./coinbaseSmartWallet";
import { kernelAccountFamily } from "./kernelAccount";
import { sendTogether } from "./localBatch";
import type { ChainClients } from "./localDeployment";
import { nexusAccountFamily } from "./nexusAccount";
import { safeAccountFamily } from "./safeAccount";

export const ACCOUNT_FAMILIES: readonly AccountFamily[] = [
  safeAccountFamily,
  kernelAccountFamily,
  nexusAccountFamily,
  coinbaseSmartWalletFamily,
];

/**
 * A creation costs about 200 gas per byte of code kept plus its calldata and constructor; 300 per byte of creation
 * code covers that with room. Given rather than estimated because the transactions are sent together (localBatch.ts),
 * and not one large figure for all, so that anvil fits several in a block.
 */
function deploymentGas(deployment: AccountContractDeployment): bigint {
  return 1_000_000n + 300n * BigInt((deployment.initCode.length - 2) / 2);
}

async function hasCode(clients: ChainClients, address: Address): Promise<boolean> {
  const code = await clients.publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

/** Deploys what is missing of every family; returns the names of the contracts (and factories) this call deployed. */
export async function deployAccountFamilies(clients: ChainClients): Promise<string[]> {
  const deployers = await ensureAccountDeployers(clients);
  const deployments = ACCOUNT_FAMILIES.flatMap((family) => family.data.deployments);
  const present = await Promise.all(deployments.map(({ address }) => hasCode(clients, address)));
  const missing = deployments.filter((_, index) => !present[index]);
  const hashes = await sendTogether(
    clients,
    missing.map((deployment) => ({
      what: `deploying ${deployment.name}`,
      to: deployment.deployer,
      data: deploymentCallData(deployment),
      gas: deploymentGas(deployment),
    })),
  );
  // The factories do not all revert when a creation fails; only code at the address proves it worked.
  const landed = await Promise.all(missing.map(({ address }) => hasCode(clients, address)));
  for (const [index, deployment] of missing.entries()) {
    if (!landed[index]) {
      throw new Error(`deploying ${deployment.name}: no code at ${deployment.address} after ${hashes[index]}`);
    }
  }
  for (const family of ACCOUNT_FAMILIES) await family.finish?.(clients);
  return [...deployers, ...missing.map(({ name }) => name)];
}
