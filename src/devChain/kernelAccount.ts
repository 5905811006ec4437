// ZeroDev Kernel 0.3.1 and 0.3.0 with their ECDSA validators (what permissionless's toKernelSmartAccount builds on
// EntryPoint v0.7 with version "0.3.1", and without a version: "0.3.0-beta"): for each its implementation, KernelFactory
// and ECDSA validator, and the meta factory (FactoryStaker) that permissionless creates accounts through, all through the
// CREATE2 proxy with the salts and code permissionless's own test chain deploys.
//
// The meta factory creates accounts only through factories its owner approved. On public chains ZeroDev's owner
// approved these KernelFactories; the owner is a constructor argument (it is part of the address), so here the local chain
// acts as that owner (anvil_impersonateAccount) for those approvals, which gives the chain the same state as a public
// one. Nothing else is done as the owner.
import { type Address, encodeFunctionData, type Hex, parseAbi, toHex } from "viem";
import kernelData from "../../contracts/accounts/kernel.json" with { type: "json" };
import { anvilRequest } from "./accountDeployers";
import { type AccountFamily, loadAccountDeploymentData } from "./accountDeploymentData";
import { confirm } from "./localBatch";
import type { ChainClients } from "./localDeployment";

const KERNEL_META_FACTORY_ADDRESS: Address = "0xd703aaE79538628d27099B8c4f621bE4CCd142d5";
/** The KernelFactory of 0.3.0 and of 0.3.1. */
const KERNEL_FACTORY_ADDRESSES: readonly Address[] = [
  "0x6723b44Abeec4E71eBE3232BD5B455805baDD22f",
  "0xaac5D4240AF87249B3f71BC8E4A2cae074A3E419",
];

const metaFactoryAbi = parseAbi([
  "function owner() view returns (address)",
  "function approved(address factory) view returns (bool)",
  "function approveFactory(address factory, bool approval)",
]);

/** approveFactory sets one mapping slot. */
const APPROVAL_GAS = 100_000n;
/** Enough ether for the owner's one call at a local chain's fees. */
const OWNER_FUNDS = 10n ** 17n;

async function approveKernelFactories(clients: ChainClients): Promise<void> {
  const { publicClient } = clients;
  const metaFactory = { address: KERNEL_META_FACTORY_ADDRESS, abi: metaFactoryAbi } as const;
  const [owner, ...approved] = await Promise.all([
    publicClient.readContract({ ...metaFactory, functionName: "owner" }),
    ...KERNEL_FACTORY_ADDRESSES.map((factory) =>
      publicClient.readContract({ ...metaFactory, functionName: "approved", args: [factory] }),
    ),
  ]);
  const unapproved = KERNEL_FACTORY_ADDRESSES.filter((_, index) => !approved[index]);
  if (unapproved.length === 0) return;
  const request = anvilRequest(clients);
  if ((await publicClient.getBalance({ address: owner })) < OWNER_FUNDS) {
    await request({ method: "anvil_setBalance", params: [owner, toHex(OWNER_FUNDS)] });
  }
  await request({ method: "anvil_impersonateAccount", params: [owner] });
  try {
    for (const factory of unapproved) {
      const hash = (await request({
        method: "eth_sendTransaction",
        params: [
          {
            from: owner,
            to: KERNEL_META_FACTORY_ADDRESS,
            data: encodeFunctionData({ ...metaFactory, functionName: "approveFactory", args: [factory, true] }),
            gas: toHex(APPROVAL_GAS),
          },
        ],
      })) as Hex;
      await confirm(publicClient, hash, `approving the KernelFactory ${factory} in the meta factory`);
    }
  } finally {
    await request({ method: "anvil_stopImpersonatingAccount", params: [owner] });
  }
}

export const kernelAccountFamily: AccountFamily = {
  name: "Kernel 0.3.0 and 0.3.1 with ECDSAValidator",
  entryPointVersion: "0.7",
  data: loadAccountDeploymentData(kernelData, "contracts/accounts/kernel.json"),
  finish: approveKernelFactories,
};
