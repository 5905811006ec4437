// The service's key added to the signer set of our paymasters that keep one (contracts/SignerSet.sol; VerifyingPaymasterV09
// so far): the counterpart, for those, of the signer rotation of the single-signer paymasters (localDeployment.ts). A key
// is added, never swapped, so what the previous key signed stays valid until its owner removes it.
import { type Address, encodeFunctionData, isAddressEqual } from "viem";
import { verifyingPaymasterV09Artifact } from "../sponsorship/paymasters/artifacts";
import type { BatchTransaction } from "./localBatch";
import type { ChainClients } from "./localDeployment";

/** addSigner writes two slots and emits one event: well under this. */
const ADD_SIGNER_GAS = 100_000n;

/**
 * The addSigner transactions for the paymasters whose set lacks `signer`, for the caller to send with others; refuses
 * when the wallet client is not the owner of one of them.
 */
export async function signerSetAdditions(
  clients: ChainClients,
  signer: Address,
  paymasters: readonly Address[],
): Promise<BatchTransaction[]> {
  const { publicClient, walletClient } = clients;
  const abi = verifyingPaymasterV09Artifact.abi;
  const states = await Promise.all(
    paymasters.map(async (address) => ({
      address,
      present: await publicClient.readContract({ address, abi, functionName: "isSigner", args: [signer] }),
      owner: await publicClient.readContract({ address, abi, functionName: "owner" }),
    })),
  );
  const missing = states.filter(({ present }) => !present);
  for (const { address, owner } of missing) {
    if (!isAddressEqual(owner, walletClient.account.address)) {
      throw new Error(
        `only the paymaster's owner ${owner} can add a signer to ${address}, not ${walletClient.account.address}`,
      );
    }
  }
  return missing.map(({ address }) => ({
    what: `adding the service's key to the signer set of ${address}`,
    to: address,
    data: encodeFunctionData({ abi, functionName: "addSigner", args: [signer] }),
    gas: ADD_SIGNER_GAS,
  }));
}
