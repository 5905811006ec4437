// `contracts deploy`: our paymasters through the CREATE2 proxy, then the service's key into each one's signer set.
// Everything is checked before anything is sent (the proxy, each EntryPoint at its canonical address, what already
// sits at each of our addresses), so a refusal leaves the chain as it was; a second run finds everything done and
// sends nothing.
import { type Address, encodeFunctionData, isAddressEqual } from "viem";
import { signerSetAbi } from "../../bindings/paymasters/signerSet";
import { CREATE2_PROXY_ADDRESS, CREATE2_PROXY_DEPLOYER, create2CallData } from "../../chain/create2";
import type { ChainConfig } from "../../config";
import { CommandError, entryPointVersions, kinds, type RawOptions, required } from "./options";
import {
  type Node,
  type OwnerWallet,
  type Reporter,
  type SentTransaction,
  type ServiceSide,
  send,
  type Transaction,
} from "./session";
import { label, occupant, type Target, targets } from "./targets";

/** The chains-file entry of the chain: what `deploy` prints last, ready to paste. */
export interface ChainsFileEntry {
  chainId: number;
  name: string;
  verifyingPaymaster?: Address;
  tokenPaymaster?: Address;
  entryPoints?: Record<
    string,
    { entryPoint: Address; verifyingPaymaster?: Address; tokenPaymaster?: Address; permitTokenPaymaster?: Address }
  >;
}

/** The chains file's field for each kind's address. */
const FIELDS = {
  verifying: "verifyingPaymaster",
  token: "tokenPaymaster",
  permitToken: "permitTokenPaymaster",
} as const satisfies Record<Target["kind"], string>;

export async function deploy(
  node: Node,
  wallet: OwnerWallet,
  owner: Address,
  service: ServiceSide,
  raw: RawOptions,
  report: Reporter,
): Promise<{ entry: ChainsFileEntry; transactions: SentTransaction[] }> {
  required(raw, "key-file");
  const dryRun = raw["dry-run"] === true;
  if (!isAddressEqual(wallet.account.address, owner)) {
    throw new CommandError(
      `--key-file holds the key of ${wallet.account.address}, not of --owner ${owner}: give the owner's key, which pays for the deployment and adds the service's key to the signer sets`,
    );
  }
  const chosen = targets(owner, entryPointVersions(raw), kinds(raw, ["verifying"]));
  if (chosen.length === 0) {
    throw new CommandError(
      "nothing to deploy: the up-front token paymaster (permitToken) needs EntryPoint v0.7 or later",
    );
  }
  const configured = service.config.chains.get(node.chainId);
  await refuseUnlessReady(node, chosen);

  const plan = await Promise.all(
    chosen.map(async (target) => ({ target, at: await occupant(node.publicClient, target) })),
  );
  const others = plan.filter(({ at }) => at === "other");
  if (others.length > 0) {
    throw new CommandError(
      others
        .map(
          ({ target }) =>
            `${label(target)} holds code that is not our ${target.artifact.contractName} for EntryPoint ${target.entryPoint}; nothing was sent (deploy with another --owner, or leave v${target.version} ${target.kind} out)`,
        )
        .join("\n"),
    );
  }
  const transactions: SentTransaction[] = [];
  const sendOne = async (transaction: Transaction) => {
    const sent = await send(node, wallet, transaction, report, dryRun);
    if (sent) transactions.push(sent);
  };
  for (const { target, at } of plan) {
    if (at === "ours") {
      report.say(`already deployed: ${label(target)}`);
      continue;
    }
    await sendOne({
      what: `deploying ${target.artifact.contractName} for EntryPoint v${target.version} at ${target.address}`,
      to: CREATE2_PROXY_ADDRESS,
      data: create2CallData(target.initCode),
    });
    // Only our code at the address proves the creation worked, whatever the receipt says.
    if (!dryRun && (await occupant(node.publicClient, target)) !== "ours") {
      throw new CommandError(
        `${label(target)}: the deployment was mined but our code is not there; run deploy again, and if it fails the same way, the chain's CREATE2 proxy is not the standard one`,
      );
    }
  }
  for (const { target, at } of plan) {
    // A paymaster this run only pretended to deploy has no set to read yet: it would need the key added.
    const present =
      dryRun && at === "nothing"
        ? false
        : await node.publicClient.readContract({
            address: target.address,
            abi: signerSetAbi,
            functionName: "isSigner",
            args: [service.signer],
          });
    if (present) {
      report.say(`already a signer: the service's key ${service.signer} at ${label(target)}`);
      continue;
    }
    await sendOne({
      what: `adding the service's key ${service.signer} to the signers of ${label(target)}`,
      to: target.address,
      data: encodeFunctionData({ abi: signerSetAbi, functionName: "addSigner", args: [service.signer] }),
    });
  }
  if (transactions.length === 0 && !dryRun) {
    report.say("nothing to send: every paymaster is deployed and signs with the service's key");
  }
  // The contract takes any token the service signs for; which ones is the chains file's (checked by `status`).
  if (chosen.some((target) => target.kind !== "verifying") && (configured?.tokens ?? []).length === 0) {
    report.say(
      `next: list chain ${node.chainId}'s fee tokens (address, symbol, decimals, price) under \`tokens\` in the chains file, beside the tokenPaymaster addresses below: ERC20 mode serves only those`,
    );
  }
  return { entry: chainsFileEntry(node.chainId, configured, chosen), transactions };
}

async function refuseUnlessReady(node: Node, chosen: readonly Target[]) {
  const problems: string[] = [];
  const hasCode = async (address: Address) => {
    const code = await node.publicClient.getCode({ address });
    return code !== undefined && code !== "0x";
  };
  if (!(await hasCode(CREATE2_PROXY_ADDRESS))) {
    problems.push(
      `chain ${node.chainId} has no CREATE2 proxy at ${CREATE2_PROXY_ADDRESS}: it is put there by its own pre-signed transaction (github.com/Arachnid/deterministic-deployment-proxy): fund ${CREATE2_PROXY_DEPLOYER} with the gas that transaction needs and broadcast it, or ask the chain's operators to`,
    );
  }
  const versions = [...new Set(chosen.map((target) => target.version))];
  for (const version of versions) {
    const entryPoint = chosen.find((target) => target.version === version)?.entryPoint as Address;
    if (!(await hasCode(entryPoint))) {
      problems.push(
        `EntryPoint v${version} is not at its canonical address ${entryPoint} on chain ${node.chainId}: bundlers serve that address only; leave v${version} out with --entry-points`,
      );
    }
  }
  if (problems.length > 0) throw new CommandError(`nothing was sent:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
}

function chainsFileEntry(
  chainId: number,
  configured: ChainConfig | undefined,
  chosen: readonly Target[],
): ChainsFileEntry {
  const entry: ChainsFileEntry = { chainId, name: configured?.name ?? `chain ${chainId}` };
  for (const target of chosen) {
    const field = FIELDS[target.kind];
    if (target.version === "0.6") {
      // No permitToken for v0.6 (targets() leaves it out).
      if (field !== "permitTokenPaymaster") entry[field] = target.address;
      continue;
    }
    entry.entryPoints ??= {};
    entry.entryPoints[target.version] ??= { entryPoint: target.entryPoint };
    (entry.entryPoints[target.version] as Record<string, Address>)[field] = target.address;
  }
  return entry;
}
