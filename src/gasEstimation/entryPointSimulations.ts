// EntryPoint v0.7, v0.8 and v0.9 have no simulation functions of their own: EntryPointSimulations (eth-infinitism) is
// the EntryPoint with simulateHandleOp added, written to run in place of the EntryPoint for one eth_call (its code put
// at the EntryPoint's address by a state override), over the EntryPoint's own storage. Its runtime code is committed in
// contracts/simulations/ (scripts/buildEntryPointSimulations.ts; where it comes from in the README there), imported as
// JSON modules so that a production build, which has no development packages, carries it.
import { type Abi, type Hex, isHex, parseAbi } from "viem";
import v07 from "../../contracts/simulations/entryPointSimulationsV07.json" with { type: "json" };
import v08 from "../../contracts/simulations/entryPointSimulationsV08.json" with { type: "json" };
import v09 from "../../contracts/simulations/entryPointSimulationsV09.json" with { type: "json" };
import type { LaterEntryPointVersion } from "../config";

/** What one eth_call needs of a version's simulation contract. */
export interface EntryPointSimulations {
  /** Runtime code to put at the EntryPoint's address. */
  code: Hex;
  /** simulateHandleOp and every custom error of the contract, to name whatever a simulation reverts with. */
  abi: Abi;
}

function load(json: unknown, file: string): EntryPointSimulations {
  const { contractName, abi, deployedBytecode } = json as Record<string, unknown>;
  if (contractName !== "EntryPointSimulations" || !Array.isArray(abi) || !isHex(deployedBytecode)) {
    throw new Error(`contracts/simulations/${file} is not EntryPointSimulations' runtime code and ABI`);
  }
  return { code: deployedBytecode, abi: abi as Abi };
}

export const ENTRY_POINT_SIMULATIONS: Readonly<Record<LaterEntryPointVersion, EntryPointSimulations>> = {
  "0.7": load(v07, "entryPointSimulationsV07.json"),
  "0.8": load(v08, "entryPointSimulationsV08.json"),
  "0.9": load(v09, "entryPointSimulationsV09.json"),
};

/**
 * The call and the errors the estimate reads, the same in all three versions (the test pins them to each committed
 * ABI). Unlike v0.6's, this simulateHandleOp returns its ExecutionResult; it reverts only when the operation fails.
 */
export const simulateHandleOpAbi = parseAbi([
  "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
  "struct ExecutionResult { uint256 preOpGas; uint256 paid; uint256 accountValidationData; uint256 paymasterValidationData; bool targetSuccess; bytes targetResult; }",
  "function simulateHandleOp(PackedUserOperation op, address target, bytes targetCallData) returns (ExecutionResult)",
  "error FailedOp(uint256 opIndex, string reason)",
  "error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)",
]);
