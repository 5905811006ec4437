// ERC-7579's execute(bytes32 mode, bytes executionCalldata), the one entry point of modular accounts (Kernel v3,
// Biconomy Nexus, Safe with the 7579 adapter): the mode says how to read executionCalldata.
//
// mode = callType (1 byte) ++ execType (1) ++ unused (4) ++ modeSelector (4) ++ modePayload (22)
import { decodeAbiParameters, getAddress, type Hex, hexToBigInt, parseAbiParameters } from "viem";
import type { Call, DecodedCalls } from "./callData";

const CALL_SINGLE = "00";
const CALL_BATCH = "01";
const CALL_STATIC = "fe";
const CALL_DELEGATE = "ff";
/** Revert on a failed call (00) or carry on (01, "try"): who pays is the same either way. */
const EXEC_TYPES = new Set(["00", "01"]);
/** The default mode selector; others are account extensions whose reading of executionCalldata we do not know. */
const DEFAULT_MODE_SELECTOR = "00000000";

const executeArgs = parseAbiParameters("bytes32, bytes");
const executions = parseAbiParameters("(address target, uint256 value, bytes callData)[]");

const EXECUTE_SELECTOR = "e9ae5c53";

/**
 * EntryPoint v0.7's IAccountExecute: callData `executeUserOp.selector ++ inner` makes the EntryPoint call
 * executeUserOp(userOp, hash), and Kernel v3 and Nexus then run `inner` on themselves (around their execution hooks).
 * One level is read: `inner` must be execute(bytes32,bytes), anything else the account could run on itself (a module
 * install, an upgrade) is refused.
 */
export function decodeErc7579ExecuteUserOp(rest: Hex): DecodedCalls {
  const inner = rest.slice(2, 10).toLowerCase();
  if (inner !== EXECUTE_SELECTOR) {
    return {
      ok: false,
      reason: `executeUserOp wraps selector 0x${inner}: only execute(bytes32,bytes) (0x${EXECUTE_SELECTOR}) is read inside it`,
    };
  }
  return decodeErc7579Execute(`0x${rest.slice(10)}`);
}

/** The calls of execute(bytes32,bytes)'s ABI-encoded arguments (after the selector). */
export function decodeErc7579Execute(args: Hex): DecodedCalls {
  const [mode, executionCalldata] = decodeAbiParameters(executeArgs, args);
  // "0x" then 64 hex digits: callType at [2, 4), execType at [4, 6), modeSelector at [14, 22).
  const callType = mode.slice(2, 4).toLowerCase();
  const execType = mode.slice(4, 6).toLowerCase();
  const modeSelector = mode.slice(14, 22).toLowerCase();
  if (callType === CALL_DELEGATE) {
    return {
      ok: false,
      reason:
        "ERC-7579 delegatecall executions are never sponsored: they run code of the target's choice as the account",
    };
  }
  if (callType === CALL_STATIC) {
    return { ok: false, reason: "ERC-7579 static calls are not sponsored: they change nothing on chain" };
  }
  if (callType !== CALL_SINGLE && callType !== CALL_BATCH) {
    return { ok: false, reason: `unknown ERC-7579 call type 0x${callType}` };
  }
  if (!EXEC_TYPES.has(execType)) return { ok: false, reason: `unknown ERC-7579 exec type 0x${execType}` };
  if (modeSelector !== DEFAULT_MODE_SELECTOR) {
    return {
      ok: false,
      reason: `unknown ERC-7579 mode selector 0x${modeSelector}: only the default 0x00000000 is read`,
    };
  }
  if (callType === CALL_SINGLE) return decodeSingleExecution(executionCalldata);
  const decoded = decodeAbiParameters(executions, executionCalldata)[0];
  return { ok: true, calls: decoded.map(({ target, value, callData }) => ({ to: target, value, data: callData })) };
}

/** A single execution is packed, not ABI-encoded: target (20 bytes) ++ value (32) ++ callData (the rest). */
function decodeSingleExecution(packed: Hex): DecodedCalls {
  // 2 for "0x", 40 for the address, 64 for the value.
  if (packed.length < 106) {
    return { ok: false, reason: "ERC-7579 single execution is shorter than its target and value (52 bytes)" };
  }
  const call: Call = {
    to: getAddress(`0x${packed.slice(2, 42)}`),
    value: hexToBigInt(`0x${packed.slice(42, 106)}`),
    data: `0x${packed.slice(106)}`,
  };
  return { ok: true, calls: [call] };
}
