// The EntryPoint v0.7 and v0.8 stacks from the npm artifacts of @account-abstraction/contracts 0.7.0 and 0.8.0, as
// CREATE2 deployments through the deterministic deployer: the salts are the ones the EntryPoints were deployed with on
// public chains, so a local chain gets them at their canonical addresses. Deploying through CREATE2 matters beyond the
// address: v0.8's SenderCreator records the EntryPoint that created it, and the v0.8 factory serves only that
// SenderCreator, so code copied in with anvil_setCode would not work.
import { type Address, concat, encodeAbiParameters, getContractAddress, type Hex, zeroHash } from "viem";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../bindings/entryPoints/entryPointV07";
import { type Artifact, loadArtifact } from "../bindings/paymasters/artifacts";
import { CREATE2_DEPLOYER_ADDRESS } from "./deployments";

export interface SaltedDeployment {
  name: string;
  salt: Hex;
  /** Creation code with its constructor arguments appended. */
  initCode: Hex;
  address: Address;
}

export type EntryPointVersion = "0.7" | "0.8";

export interface EntryPointStack {
  version: EntryPointVersion;
  entryPoint: SaltedDeployment;
  simpleAccountFactory: SaltedDeployment;
  /** In dependency order: the factory's constructor reads the EntryPoint. */
  deployments: SaltedDeployment[];
}

function salted(name: string, salt: Hex, initCode: Hex): SaltedDeployment {
  const address = getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER_ADDRESS, salt, bytecode: initCode });
  return { name, salt, initCode, address };
}

function npmArtifact(version: EntryPointVersion, name: string): Artifact {
  return loadArtifact(`@account-abstraction/contracts-v${version}/artifacts/${name}.json`);
}

const entryPointSalts: Record<EntryPointVersion, Hex> = {
  "0.7": "0x90d8084deab30c2a37c45e8d47f49f2f7965183cb6990a98943ef94940681de3",
  "0.8": "0x0a59dbff790c23c976a548690c27297883cc66b4c67024f9117b0238995e35e9",
};
const canonicalEntryPoints: Record<EntryPointVersion, Address> = {
  "0.7": ENTRY_POINT_V07_ADDRESS,
  "0.8": ENTRY_POINT_V08_ADDRESS,
};

/** The EntryPoint and SimpleAccountFactory of one version, built from its npm artifacts. */
export function entryPointStack(version: EntryPointVersion): EntryPointStack {
  const entryPoint = salted(
    `EntryPoint v${version}`,
    entryPointSalts[version],
    npmArtifact(version, "EntryPoint").bytecode,
  );
  const simpleAccountFactory = salted(
    `SimpleAccountFactory v${version}`,
    zeroHash,
    concat([
      npmArtifact(version, "SimpleAccountFactory").bytecode,
      encodeAbiParameters([{ type: "address" }], [entryPoint.address]),
    ]),
  );
  // A changed artifact would land elsewhere and silently not be the EntryPoint that chains and bundlers know.
  if (entryPoint.address.toLowerCase() !== canonicalEntryPoints[version].toLowerCase()) {
    throw new Error(
      `EntryPoint v${version} from the npm artifact lands at ${entryPoint.address}, not ${canonicalEntryPoints[version]}`,
    );
  }
  return { version, entryPoint, simpleAccountFactory, deployments: [entryPoint, simpleAccountFactory] };
}

/** v0.8's account for EIP-7702 delegation; it takes no constructor argument (its EntryPoint is built in). */
export function simple7702AccountDeployment(): SaltedDeployment {
  return salted("Simple7702Account v0.8", zeroHash, npmArtifact("0.8", "Simple7702Account").bytecode);
}
