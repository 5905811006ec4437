// `contracts signers add|remove`: the owner changes the signer set of each paymaster (contracts/SignerSet.sol). A
// rotation is add (the new key), move the service to it, then remove (the old key) once what it signed has been mined
// or has expired: no signature in flight is lost. Each run reads the set first and sends only what changes it.
import { type Address, encodeFunctionData } from "viem";
import { signerSetAbi } from "../../bindings/paymasters/signerSet";
import type { Node, Reporter, SentTransaction } from "./session";
import { label, type Target } from "./targets";

export async function changeSigners(
  node: Node,
  chosen: readonly Target[],
  change: "add" | "remove",
  signer: Address,
  report: Reporter,
  sendOne: (what: string, to: Address, data: `0x${string}`) => Promise<SentTransaction | undefined>,
): Promise<void> {
  const present = await Promise.all(
    chosen.map((target) =>
      node.publicClient.readContract({
        address: target.address,
        abi: signerSetAbi,
        functionName: "isSigner",
        args: [signer],
      }),
    ),
  );
  for (const [index, target] of chosen.entries()) {
    const isSigner = present[index] === true;
    if (change === "add" ? isSigner : !isSigner) {
      report.say(`${change === "add" ? "already a signer" : "not a signer"}: ${signer} at ${label(target)}`);
      continue;
    }
    const functionName = change === "add" ? "addSigner" : "removeSigner";
    await sendOne(
      `${change === "add" ? "adding" : "removing"} ${signer} ${change === "add" ? "to" : "from"} the signers of ${label(target)}`,
      target.address,
      encodeFunctionData({ abi: signerSetAbi, functionName, args: [signer] }),
    );
  }
}
