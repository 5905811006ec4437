// Where our paymasters of one owner are on any chain: CREATE2 through the proxy, from the committed code, the
// EntryPoint and the owner alone. What is at each address decides what a subcommand does there.
import { type Address, type Hex, isAddressEqual, type PublicClient } from "viem";
import type { KnownEntryPointVersion } from "../../bindings/entryPoints/versions";
import type { Artifact } from "../../bindings/paymasters/artifacts";
import {
  OUR_PAYMASTERS,
  type OurPaymasterKind,
  ourPaymaster,
  paymasterInitCode,
} from "../../bindings/paymasters/ourPaymasters";
import { signerSetAbi } from "../../bindings/paymasters/signerSet";
import { create2Address } from "../../chain/create2";
import { isOurPaymasterCode } from "../../chain/paymasterCode";
import { CommandError } from "./options";

export interface Target {
  version: KnownEntryPointVersion;
  kind: OurPaymasterKind;
  entryPoint: Address;
  artifact: Artifact;
  initCode: Hex;
  address: Address;
}

/** Every version and kind asked for that we have a contract for (the up-front token paymaster has none for v0.6). */
export function targets(
  owner: Address,
  versions: readonly KnownEntryPointVersion[],
  kinds: readonly OurPaymasterKind[],
): Target[] {
  return versions.flatMap((version) =>
    kinds.flatMap((kind) => {
      const artifact = ourPaymaster(version, kind);
      if (artifact === undefined) return [];
      const entryPoint = OUR_PAYMASTERS[version].canonicalEntryPoint;
      const initCode = paymasterInitCode(artifact, entryPoint, owner);
      return [{ version, kind, entryPoint, artifact, initCode, address: create2Address(initCode) }];
    }),
  );
}

export type Occupant = "nothing" | "ours" | "other";

export async function occupant(client: PublicClient, target: Target): Promise<Occupant> {
  const code = await client.getCode({ address: target.address });
  if (code === undefined || code === "0x") return "nothing";
  return isOurPaymasterCode(code, target.artifact, target.entryPoint) ? "ours" : "other";
}

export function label(target: Pick<Target, "version" | "kind" | "address">): string {
  return `${target.kind} paymaster v${target.version} ${target.address}`;
}

/** Those of `all` that hold our code on the chain, saying of each other one why it is skipped. */
async function deployedTargets(client: PublicClient, all: Target[], say: (line: string) => void): Promise<Target[]> {
  const found = await Promise.all(all.map(async (target) => ({ target, at: await occupant(client, target) })));
  for (const { target, at } of found) {
    if (at === "nothing") say(`skipped: ${label(target)}: not deployed`);
    if (at === "other") say(`skipped: ${label(target)}: holds code that is not ours`);
  }
  return found.filter(({ at }) => at === "ours").map(({ target }) => target);
}

/**
 * The paymasters of ours that the --key-file's account owns on this chain (every version and kind unless narrowed):
 * their addresses follow from that owner, and each must still be owned by it (Ownable can hand a contract over).
 */
export async function ownedTargets(
  client: PublicClient,
  owner: Address,
  versions: readonly KnownEntryPointVersion[],
  kinds: readonly OurPaymasterKind[],
  say: (line: string) => void,
): Promise<Target[]> {
  const deployed = await deployedTargets(client, targets(owner, versions, kinds), say);
  if (deployed.length === 0) {
    throw new CommandError(
      `no paymaster of ours for owner ${owner} on this chain (versions ${versions.join(", ")}, kinds ${kinds.join(", ")}): deploy them first with \`contracts deploy\``,
    );
  }
  const owners = await Promise.all(
    deployed.map((target) =>
      client.readContract({ address: target.address, abi: signerSetAbi, functionName: "owner" }),
    ),
  );
  const handedOver = deployed.filter((_, index) => !isAddressEqual(owners[index] as Address, owner));
  if (handedOver.length > 0) {
    throw new CommandError(
      handedOver
        .map(
          (target) =>
            `${label(target)} is now owned by ${owners[deployed.indexOf(target)]}: use that owner's --key-file`,
        )
        .join("\n"),
    );
  }
  return deployed;
}
