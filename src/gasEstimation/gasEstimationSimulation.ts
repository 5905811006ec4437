// The service's own estimate, through the chain's node alone: EntryPoint v0.6's simulateHandleOp in eth_call, which
// always reverts with the outcome. Two calls run side by side:
//
//   A  the operation as is, priced at 1 wei per gas: ExecutionResult.preOpGas is the gas of validation (initCode
//      included; preVerificationGas is 0), and `paid` − preOpGas the gas of execution.
//   B  the operation with empty callData, then the EntryPoint (simulateHandleOp's target hook) calls the sender with the
//      real callData after validation, so a counterfactual account is deployed first: targetSuccess and targetResult
//      say whether the call reverts, and why. A alone cannot: the EntryPoint swallows the call's revert. (An account
//      whose validation reads callData may refuse B's empty callData; then only A counts.)
//
// A state override gives our paymaster a large EntryPoint deposit in these calls only, so the estimate never depends on
// how much the dApps have deposited (that is the deposit rule's business), and the simulation pays no real ether. The
// caller may add storage of its own (a fee quote: the token allowance the wallet will give).
import {
  type Address,
  type DecodeErrorResultReturnType,
  decodeErrorResult,
  encodeAbiParameters,
  type Hex,
  type PublicClient,
  parseAbi,
  size,
  toHex,
  zeroAddress,
} from "viem";
import { keccak256 } from "../abi/keccak";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { describeRevertData, EstimationUnavailableError, OperationRevertedError } from "./gasEstimationErrors";
import {
  executionOf,
  nodeFailure,
  refuseRevertingCall,
  revertDataOf,
  type SimulationOutcome,
} from "./simulationOutcome";
import { type StorageOverride, toViemStateOverride } from "./storageOverride";

/** Gas the simulated operation may use; both far above any real need and, together, within nodes' eth_call caps. */
export const SIMULATION_CALL_GAS = 10_000_000n;
export const SIMULATION_VERIFICATION_GAS = 3_000_000n;

/** EntryPoint v0.6's simulation entry and what it reverts with (test/chain checks them against the npm artifact). */
export const simulationAbi = parseAbi([
  "struct UserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; uint256 callGasLimit; uint256 verificationGasLimit; uint256 preVerificationGas; uint256 maxFeePerGas; uint256 maxPriorityFeePerGas; bytes paymasterAndData; bytes signature; }",
  "function simulateHandleOp(UserOperation op, address target, bytes targetCallData)",
  "error ExecutionResult(uint256 preOpGas, uint256 paid, uint48 validAfter, uint48 validUntil, bool targetSuccess, bytes targetResult)",
  "error FailedOp(uint256 opIndex, string reason)",
]);

/** What the simulation measured, before any margin. */
export interface SimulatedGas {
  /** Validation: account creation, validateUserOp, the paymaster's validation with the dummy signature. */
  verificationGas: bigint;
  /** From the end of validation to the end of the operation: the call and the EntryPoint's frame around it. */
  executionGas: bigint;
}

/**
 * Storage slot of `deposits[holder]` in every EntryPoint version: StakeManager's mapping is its first state variable
 * (slot 0), and the deposit is the low bits of the entry's first word.
 */
export function depositSlot(holder: Address): Hex {
  return keccak256(encodeAbiParameters([{ type: "address" }, { type: "uint256" }], [holder, 0n]));
}

/** deposit = 2^100 wei; the stake fields beside it (v0.6), which the simulations never read, are zero. */
export const SIMULATED_DEPOSIT = toHex(1n << 100n, { size: 32 });

function outcomeOf(data: Hex): SimulationOutcome {
  let decoded: DecodeErrorResultReturnType<typeof simulationAbi> | undefined;
  try {
    decoded = decodeErrorResult({ abi: simulationAbi, data });
  } catch {
    return { kind: "failed", reason: describeRevertData(data) };
  }
  if (decoded.errorName === "FailedOp") return { kind: "failed", reason: decoded.args[1] };
  const [preOpGas, paid, , , targetSuccess, targetResult] = decoded.args;
  return { kind: "execution", preOpGas, paid, targetSuccess, targetResult };
}

async function simulateHandleOp(
  client: PublicClient,
  entryPoint: Address,
  paymaster: Address,
  op: UserOperation,
  target: Address,
  targetCallData: Hex,
  overrides: readonly StorageOverride[],
): Promise<SimulationOutcome> {
  const deposit = { address: entryPoint, slot: depositSlot(paymaster), value: SIMULATED_DEPOSIT };
  try {
    await client.simulateContract({
      address: entryPoint,
      abi: simulationAbi,
      functionName: "simulateHandleOp",
      args: [op, target, targetCallData],
      stateOverride: toViemStateOverride([deposit, ...overrides]),
    });
  } catch (error) {
    const data = revertDataOf(error);
    if (data && size(data) > 0) return outcomeOf(data);
    throw nodeFailure(error);
  }
  // Only a missing contract returns normally: simulateHandleOp itself always reverts.
  throw new EstimationUnavailableError(
    `simulateHandleOp did not revert: is EntryPoint v0.6 deployed at ${entryPoint}?`,
  );
}

/**
 * Measures the operation's gas. `op` carries the stub paymasterAndData and an account signature of the final length;
 * its gas and fee fields are replaced here. `overrides` are storage the simulation assumes besides our paymaster's
 * deposit. Throws OperationRevertedError when validation fails or the call reverts.
 */
export async function simulateOperationGas(
  client: PublicClient,
  entryPoint: Address,
  paymaster: Address,
  op: UserOperation,
  overrides: readonly StorageOverride[] = [],
): Promise<SimulatedGas> {
  // 1 wei per gas with maxFee = maxPriorityFee (the EntryPoint's legacy rule ignores the base fee): `paid` is in gas.
  const simulated: UserOperation = {
    ...op,
    callGasLimit: SIMULATION_CALL_GAS,
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  };
  const hasCall = size(op.callData) > 0;
  const [outcome, callCheck] = await Promise.all([
    simulateHandleOp(client, entryPoint, paymaster, simulated, zeroAddress, "0x", overrides),
    hasCall
      ? simulateHandleOp(
          client,
          entryPoint,
          paymaster,
          { ...simulated, callData: "0x" },
          op.sender,
          op.callData,
          overrides,
        )
      : undefined,
  ]);
  const measured = executionOf(outcome);
  refuseRevertingCall(callCheck);
  const executionGas = measured.paid - measured.preOpGas;
  if (executionGas >= SIMULATION_CALL_GAS) {
    throw new OperationRevertedError(`the operation's call needs more than ${SIMULATION_CALL_GAS} gas`);
  }
  return { verificationGas: measured.preOpGas, executionGas };
}
