// Compiled contracts: ours from contracts/artifacts (built by scripts/build-contracts.ts and committed), and the
// EntryPoint v0.6 reference contracts from @account-abstraction/contracts, whose bytecode is the one deployed on
// mainnets (that is what puts the EntryPoint at its canonical CREATE2 address).
import { createRequire } from "node:module";
import { type Abi, type Hex, isHex } from "viem";
import { verifyingPaymasterAbi } from "../../contracts/artifacts/VerifyingPaymaster.abi";
import { verifyingPaymasterV07Abi } from "../../contracts/artifacts/VerifyingPaymasterV07.abi";

export interface Artifact<TAbi extends Abi = Abi> {
  contractName: string;
  abi: TAbi;
  /** Creation code, constructor arguments not included. */
  bytecode: Hex;
  /** Runtime code as compiled; immutables are still zero placeholders, so it differs from code read from a chain. */
  deployedBytecode: Hex;
}

const require = createRequire(import.meta.url);

/** Reads one artifact and checks its shape, so a truncated or hand-edited file fails here and not at deployment. */
export function loadArtifact(specifier: string): Artifact {
  const raw = require(specifier) as Record<string, unknown>;
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

const accountAbstraction = "@account-abstraction/contracts/artifacts";

export const entryPointArtifact = loadArtifact(`${accountAbstraction}/EntryPoint.json`);
export const simpleAccountFactoryArtifact = loadArtifact(`${accountAbstraction}/SimpleAccountFactory.json`);
export const simpleAccountArtifact = loadArtifact(`${accountAbstraction}/SimpleAccount.json`);

export const verifyingPaymasterArtifact: Artifact<typeof verifyingPaymasterAbi> = {
  ...loadArtifact("../../contracts/artifacts/VerifyingPaymaster.json"),
  abi: verifyingPaymasterAbi,
};

/** Our verifying paymaster for EntryPoint v0.7 and v0.8 (one deployment per EntryPoint). */
export const verifyingPaymasterV07Artifact: Artifact<typeof verifyingPaymasterV07Abi> = {
  ...loadArtifact("../../contracts/artifacts/VerifyingPaymasterV07.json"),
  abi: verifyingPaymasterV07Abi,
};
