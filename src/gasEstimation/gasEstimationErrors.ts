import { decodeErrorResult, type Hex, parseAbi, size, slice } from "viem";
import { clipDetail } from "../chain/transportError";

/** The operation itself fails: it reverts or is refused in simulation. The message says why, for the client. */
export class OperationRevertedError extends Error {
  override name = "OperationRevertedError";
}

/**
 * The estimate could not be made for a reason on the service's side: the node or the bundler is unreachable, too slow,
 * or answered something unusable. The message names which and what happened, never its URL (URLs carry API keys).
 */
export class EstimationUnavailableError extends Error {
  override name = "EstimationUnavailableError";
}

// Kept here too for the gas estimation's and the token prices' callers: what a transport failure says is the chain's.
export { describeTransportError } from "../chain/transportError";

const revertAbi = parseAbi(["error Error(string reason)", "error Panic(uint256 code)"]);

/** A revert payload as a person can read it: the reason string, the panic code, or a custom error's selector. */
export function describeRevertData(data: Hex): string {
  if (size(data) === 0) return "reverted without a reason";
  try {
    const decoded = decodeErrorResult({ abi: revertAbi, data });
    if (decoded.errorName === "Error") return clipDetail(decoded.args[0]);
    return `panic 0x${decoded.args[0].toString(16)}`;
  } catch {
    if (size(data) < 4) return clipDetail(`reverted with ${data}`);
    return clipDetail(`custom error ${slice(data, 0, 4)} (${data})`);
  }
}
