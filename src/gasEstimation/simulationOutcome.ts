// What a simulateHandleOp call comes to, on every EntryPoint version (v0.6's own function, the later versions' through
// EntryPointSimulations), and the judgement both estimates pass on it: the operation fails validation (call A), its
// call reverts (call B), or the node did not run the simulation at all, which is the service's problem, not the
// operation's.
import { BaseError, ContractFunctionRevertedError, type Hex } from "viem";
import { CHAIN_RPC_TIMEOUT_MS } from "../chain/chainClient";
import {
  describeRevertData,
  describeTransportError,
  EstimationUnavailableError,
  OperationRevertedError,
} from "./gasEstimationErrors";

export type SimulationOutcome =
  | { kind: "execution"; preOpGas: bigint; paid: bigint; targetSuccess: boolean; targetResult: Hex }
  | { kind: "failed"; reason: string };

export type SimulatedExecution = Extract<SimulationOutcome, { kind: "execution" }>;

/**
 * The data a simulation's eth_call reverted with (`0x` for a revert without any), or undefined when the error is not a
 * revert: the node was not reached, was too slow, or refused the call.
 */
export function revertDataOf(error: unknown): Hex | undefined {
  const reverted =
    error instanceof BaseError ? error.walk((cause) => cause instanceof ContractFunctionRevertedError) : null;
  return reverted instanceof ContractFunctionRevertedError ? (reverted.raw ?? "0x") : undefined;
}

/** The node could not run the simulation: what its transport said, never its URL. */
export function nodeFailure(error: unknown): EstimationUnavailableError {
  return new EstimationUnavailableError(
    `the chain's node could not simulate the operation: ${describeTransportError(error, CHAIN_RPC_TIMEOUT_MS)}`,
  );
}

/** The outcome's measurement; OperationRevertedError when the operation fails validation. */
export function executionOf(outcome: SimulationOutcome): SimulatedExecution {
  if (outcome.kind === "failed") throw new OperationRevertedError(`the operation fails validation: ${outcome.reason}`);
  return outcome;
}

/**
 * OperationRevertedError when call B (empty callData, then the target hook sends the sender the real one) ran and the
 * call reverted. B's validation can fail where A's passed (an account that validates callData itself, session keys,
 * and B's is empty): then B says nothing about the call, and A's measurement stands alone.
 */
export function refuseRevertingCall(callCheck: SimulationOutcome | undefined): void {
  if (callCheck?.kind === "execution" && !callCheck.targetSuccess) {
    throw new OperationRevertedError(`the operation's call reverts: ${describeRevertData(callCheck.targetResult)}`);
  }
}
