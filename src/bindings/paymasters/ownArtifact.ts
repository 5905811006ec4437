// Loads one of our committed contract artifacts (contracts/artifacts, built by scripts/build-contracts.ts): the JSON
// module (so that a build bundles it) with the typed ABI module beside it. A truncated or hand-edited file fails here,
// not on chain. Our artifacts need no development package, so a production command may load them.
import { type Abi, isHex } from "viem";
import type { Artifact } from "./artifacts";

export function loadOwnArtifact<TAbi extends Abi>(json: unknown, contractName: string, abi: TAbi): Artifact<TAbi> {
  const raw = json as Record<string, unknown>;
  const { bytecode, deployedBytecode } = raw;
  if (raw.contractName !== contractName || !isHex(bytecode) || bytecode.length <= 2 || !isHex(deployedBytecode)) {
    throw new Error(`contracts/artifacts/${contractName}.json is not the artifact of ${contractName}`);
  }
  return { contractName, abi, bytecode, deployedBytecode };
}
