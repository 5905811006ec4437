// The service's own estimate for EntryPoint v0.7, v0.8 and v0.9 operations, through the chain's node alone. Those
// EntryPoints have no simulation functions, so each eth_call puts EntryPointSimulations' code at the EntryPoint's
// address (entryPointSimulations.ts), over the EntryPoint's own storage, and calls its simulateHandleOp, which returns
// an ExecutionResult (v0.6's reverts with it) and reverts only when validation fails. Three calls run side by side,
// priced at 1 wei per gas with preVerificationGas 0, so that preOpGas and `paid` count gas:
//
//   A  the operation as is. On v0.8 and v0.9, `paid` − preOpGas is the call's gas plus what follows it plus the
//      penalty on unused call gas; executionGasV07.ts solves the call's gas out of it with one or more further
//      readings of A at lower callGasLimits, after these three.
//   B  as v0.6's: empty callData, then the target hook calls the sender with the real callData (after a counterfactual
//      account is deployed), to learn whether the call reverts, and why: A cannot tell, the EntryPoint swallows it.
//   V  without the paymaster. Its preOpGas is the account's validation alone (initCode included), what
//      verificationGasLimit must cover; A's also holds the paymaster's validation, which has a limit of its own. With
//      no paymaster the EntryPoint takes the prefund from the sender's deposit, so V counts that bookkeeping too (a
//      cold read and a write, about 5,000 gas over the need). On v0.7, V also gives the call's gas: v0.7 weighs the
//      call and postOp in one sum, which A cannot split. Should V fail where A passed (an account that wants a
//      paymaster), A's figures, the larger, stand in.
//
// A state override gives our paymaster (and, for V, the sender) a large EntryPoint deposit, merged with the code
// override of the EntryPoint and with the caller's storage overrides, one entry per address. An EIP-7702 operation's
// delegation is not on chain before its bundle: its authorization's designator is put in the sender's code.
import {
  type Address,
  concat,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  type PublicClient,
  parseAbi,
  type StateOverride,
  size,
  slice,
  zeroAddress,
} from "viem";
import type { PackedUserOperation } from "../bindings/entryPoints/packedUserOperation";
import { getUserOpHashV07, packUserOperation, type UserOperationV07 } from "../bindings/entryPoints/userOperationV07";
import type { LaterEntryPointVersion } from "../config";
import { ENTRY_POINT_SIMULATIONS, simulateHandleOpAbi } from "./entryPointSimulations";
import { executionGasV08, largestPenalisedUse } from "./executionGasV07";
import { describeRevertData, EstimationUnavailableError, OperationRevertedError } from "./gasEstimationErrors";
import {
  depositSlot,
  SIMULATED_DEPOSIT,
  SIMULATION_CALL_GAS,
  SIMULATION_VERIFICATION_GAS,
} from "./gasEstimationSimulation";
import {
  executionOf,
  nodeFailure,
  refuseRevertingCall,
  revertDataOf,
  type SimulatedExecution,
  type SimulationOutcome,
} from "./simulationOutcome";
import { type StorageOverride, toViemStateOverride } from "./storageOverride";

/** What the simulation measured, before any margin. */
export interface SimulatedGasV07 {
  /** Account creation and the account's validation: what verificationGasLimit must cover. */
  verificationGas: bigint;
  /**
   * What callGasLimit must cover: the call and the EntryPoint's frame around it. v0.8, v0.9: the executionGasUsed their
   * penalty weighs against callGasLimit, to ten gas. v0.7: read without the paymaster (V), so a little more where the
   * paymaster's validation would have warmed what the call touches.
   */
  executionGas: bigint;
}

/** IAccountExecute: an account whose callData starts with this gets executeUserOp(userOp, userOpHash) instead. */
const executeUserOpAbi = parseAbi([
  "struct PackedUserOperation { address sender; uint256 nonce; bytes initCode; bytes callData; bytes32 accountGasLimits; uint256 preVerificationGas; bytes32 gasFees; bytes paymasterAndData; bytes signature; }",
  "function executeUserOp(PackedUserOperation userOp, bytes32 userOpHash)",
]);
const EXECUTE_USER_OP_SELECTOR: Hex = "0x8dd7712f";

/** The revert, named: FailedOp's reason (with FailedOpWithRevert's inner revert), another custom error, Error(string). */
function failureOf(version: LaterEntryPointVersion, data: Hex): string {
  try {
    const { errorName, args = [] } = decodeErrorResult({ abi: ENTRY_POINT_SIMULATIONS[version].abi, data });
    if (errorName === "FailedOp") return String(args[1]);
    if (errorName === "FailedOpWithRevert") return `${args[1]}: ${describeRevertData(args[2] as Hex)}`;
    if (errorName === "Error") return String(args[0]);
    return `${errorName}(${args.map(String).join(", ")})`;
  } catch {
    return describeRevertData(data);
  }
}

interface Call {
  client: PublicClient;
  version: LaterEntryPointVersion;
  entryPoint: Address;
  stateOverride: StateOverride;
}

async function simulateHandleOp(
  { client, version, entryPoint, stateOverride }: Call,
  op: PackedUserOperation,
  target: Address = zeroAddress,
  targetCallData: Hex = "0x",
): Promise<SimulationOutcome> {
  try {
    const { result } = await client.simulateContract({
      address: entryPoint,
      abi: simulateHandleOpAbi,
      functionName: "simulateHandleOp",
      args: [op, target, targetCallData],
      stateOverride,
    });
    return { kind: "execution", ...result };
  } catch (error) {
    const data = revertDataOf(error);
    if (data && size(data) > 0) {
      const reason = failureOf(version, data);
      // The eth_call had less gas than the simulation's callGasLimit: the node's cap, not the operation.
      if (reason.startsWith("AA95")) {
        throw new EstimationUnavailableError(`the chain's node gave the simulation too little gas (${reason})`);
      }
      return { kind: "failed", reason };
    }
    if (data !== undefined) {
      // The EntryPoint itself answers simulateHandleOp with an empty revert: the code override did not take.
      throw new EstimationUnavailableError(
        `the chain's node did not run the simulation code at ${entryPoint}: does it take state overrides?`,
      );
    }
    throw nodeFailure(error);
  }
}

/** One state override for every call: the deposits, the caller's storage, and the code, merged per address. */
function stateOverrideFor(
  version: LaterEntryPointVersion,
  entryPoint: Address,
  op: UserOperationV07,
  overrides: readonly StorageOverride[],
): StateOverride {
  const holders = op.paymaster === undefined ? [op.sender] : [op.paymaster, op.sender];
  const deposits = holders.map((holder) => ({
    address: entryPoint,
    slot: depositSlot(holder),
    value: SIMULATED_DEPOSIT,
  }));
  const merged = toViemStateOverride([...deposits, ...overrides]);
  const codes: [Address, Hex][] = [[entryPoint, ENTRY_POINT_SIMULATIONS[version].code]];
  if (op.eip7702Auth) codes.push([op.sender, concat(["0xef0100", op.eip7702Auth.address])]);
  for (const [address, code] of codes) {
    const entry = merged.find((each) => each.address.toLowerCase() === address.toLowerCase());
    if (entry) entry.code = code;
    else merged.push({ address, code });
  }
  return merged;
}

/** What B's target hook sends the sender: the callData, or executeUserOp over A's operation as the EntryPoint would. */
async function callCheckData(call: Call, op: UserOperationV07): Promise<Hex> {
  if (size(op.callData) < 4 || slice(op.callData, 0, 4) !== EXECUTE_USER_OP_SELECTOR) return op.callData;
  const chainId = call.client.chain?.id ?? (await call.client.getChainId());
  const userOpHash = getUserOpHashV07(op, call.entryPoint, chainId, call.version);
  return encodeFunctionData({
    abi: executeUserOpAbi,
    functionName: "executeUserOp",
    args: [packUserOperation(op), userOpHash],
  });
}

/**
 * v0.7 weighs the call and what follows it (postOp included) in one sum against callGasLimit + postOp's limit, so A
 * cannot give the call apart from postOp: V, which has no paymaster, can (its post-execution is the EntryPoint's own few
 * hundred gas). A stands in when V failed, postOp and all.
 */
function executionGasV07(
  measured: SimulatedExecution,
  accountOnly: SimulatedExecution | undefined,
  postOpLimit: bigint,
): bigint {
  const run = accountOnly ?? measured;
  return largestPenalisedUse(run.paid - run.preOpGas, SIMULATION_CALL_GAS + (accountOnly ? 0n : postOpLimit));
}

/**
 * Measures the operation's gas on EntryPoint `version` at `entryPoint`. `op` carries our stub paymaster fields (their
 * gas limits as they will be signed) and an account signature of the final length; its account gas and fee fields are
 * replaced here. `overrides` is storage the simulation assumes besides the deposits. Throws OperationRevertedError
 * when validation fails or the call reverts (the message says why), EstimationUnavailableError when the node fails.
 */
export async function simulateOperationGasV07(
  client: PublicClient,
  version: LaterEntryPointVersion,
  entryPoint: Address,
  op: UserOperationV07,
  overrides: readonly StorageOverride[] = [],
): Promise<SimulatedGasV07> {
  const call: Call = {
    client,
    version,
    entryPoint,
    stateOverride: stateOverrideFor(version, entryPoint, op, overrides),
  };
  const simulated = (callGasLimit: bigint): UserOperationV07 => ({
    ...op,
    callGasLimit,
    verificationGasLimit: SIMULATION_VERIFICATION_GAS,
    preVerificationGas: 0n,
    maxFeePerGas: 1n,
    maxPriorityFeePerGas: 1n,
  });
  const measuring = simulated(SIMULATION_CALL_GAS);
  const withoutPaymaster: UserOperationV07 = {
    ...measuring,
    paymaster: undefined,
    paymasterVerificationGasLimit: undefined,
    paymasterPostOpGasLimit: undefined,
    paymasterData: undefined,
    paymasterSignature: undefined,
  };
  const [outcome, callCheck, accountOnly] = await Promise.all([
    simulateHandleOp(call, packUserOperation(measuring)),
    size(op.callData) > 0
      ? callCheckData(call, measuring).then((data) =>
          simulateHandleOp(call, packUserOperation({ ...measuring, callData: "0x" }), op.sender, data),
        )
      : undefined,
    simulateHandleOp(call, packUserOperation(withoutPaymaster)),
  ]);
  const measured = executionOf(outcome);
  refuseRevertingCall(callCheck);
  const accountOnlyRan = accountOnly.kind === "execution" ? accountOnly : undefined;
  const executionGas =
    version === "0.7"
      ? executionGasV07(measured, accountOnlyRan, op.paymasterPostOpGasLimit ?? 0n)
      : await executionGasV08(
          { callGasLimit: SIMULATION_CALL_GAS, charged: measured.paid - measured.preOpGas },
          async (callGasLimit) => {
            const again = executionOf(await simulateHandleOp(call, packUserOperation(simulated(callGasLimit))));
            return again.paid - again.preOpGas;
          },
        );
  if (executionGas >= SIMULATION_CALL_GAS - 50_000n) {
    throw new OperationRevertedError(`the operation's call needs more than ${SIMULATION_CALL_GAS} gas`);
  }
  const verificationGas = (accountOnlyRan ?? measured).preOpGas;
  return { verificationGas, executionGas };
}
