// Whether the code at an address is one of our paymasters, built for a given EntryPoint. The compiler leaves the
// EntryPoint immutable as a 32-byte zero placeholder in the artifact's runtime code and the constructor writes the
// address there, so the chain's code with that word zeroed again must equal the artifact byte for byte. This holds
// however the contract was deployed (through the CREATE2 proxy or not).
import type { Address, Hex } from "viem";
import type { Artifact } from "../bindings/paymasters/artifacts";

export function isOurPaymasterCode(onChain: Hex, artifact: Artifact, entryPoint: Address): boolean {
  const code = onChain.toLowerCase();
  const expected = artifact.deployedBytecode.toLowerCase();
  if (code.length !== expected.length) return false;
  const immutableWord = entryPoint.slice(2).toLowerCase().padStart(64, "0");
  return code.split(immutableWord).join("0".repeat(64)) === expected;
}
