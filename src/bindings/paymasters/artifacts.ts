// Compiled contracts: ours from contracts/artifacts (built by scripts/build-contracts.ts and committed), and the
// EntryPoint v0.6 reference contracts from @account-abstraction/contracts, whose bytecode is the one deployed on
// mainnets (that is what puts the EntryPoint at its canonical CREATE2 address).
// Imported as JSON modules (not read from disk at run time), so that a build bundles our own artifacts; the npm ones stay
// a development package that only the local chain and the tests load.

import { createRequire } from "node:module";
import entryPointJson from "@account-abstraction/contracts/artifacts/EntryPoint.json" with { type: "json" };
import simpleAccountJson from "@account-abstraction/contracts/artifacts/SimpleAccount.json" with { type: "json" };
import simpleAccountFactoryJson from "@account-abstraction/contracts/artifacts/SimpleAccountFactory.json" with {
  type: "json",
};
import { type Abi, type Hex, isHex } from "viem";

// Ours live in verifyingArtifacts.ts (no development package); re-exported for the modules that load both.
export {
  verifyingPaymasterArtifact,
  verifyingPaymasterV07Artifact,
  verifyingPaymasterV09Artifact,
} from "./verifyingArtifacts";

export interface Artifact<TAbi extends Abi = Abi> {
  contractName: string;
  abi: TAbi;
  /** Creation code, constructor arguments not included. */
  bytecode: Hex;
  /** Runtime code as compiled; immutables are still zero placeholders, so it differs from code read from a chain. */
  deployedBytecode: Hex;
}

/** Checks one artifact's shape, so a truncated or hand-edited file fails here and not at deployment. */
function load(json: unknown, specifier: string): Artifact {
  const raw = json as Record<string, unknown>;
  const { contractName, abi, bytecode, deployedBytecode } = raw;
  if (
    typeof contractName !== "string" ||
    !Array.isArray(abi) ||
    !isHex(bytecode) ||
    bytecode.length <= 2 ||
    !isHex(deployedBytecode)
  ) {
    throw new Error(`${specifier} is not a contract artifact with contractName, abi, bytecode and deployedBytecode`);
  }
  return { contractName, abi: abi as Abi, bytecode, deployedBytecode };
}

export const entryPointArtifact = load(entryPointJson, "EntryPoint.json");
export const simpleAccountFactoryArtifact = load(simpleAccountFactoryJson, "SimpleAccountFactory.json");
export const simpleAccountArtifact = load(simpleAccountJson, "SimpleAccount.json");

const require = createRequire(import.meta.url);

/**
 * Reads an artifact of an npm package by its module specifier (development packages: the v0.7/v0.8 EntryPoint stacks
 * that only the tests and the local chain deploy).
 */
export function loadArtifact(specifier: string): Artifact {
  return load(require(specifier), specifier);
}
