import {
  BaseError,
  decodeErrorResult,
  type Hex,
  HttpRequestError,
  parseAbi,
  RpcRequestError,
  size,
  slice,
  TimeoutError,
} from "viem";

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

const MAX_DETAIL = 300;

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

/** What went wrong talking to an upstream JSON-RPC (a node or a bundler), without the URL viem puts in its messages. */
export function describeTransportError(error: unknown, timeoutMs: number): string {
  if (error instanceof BaseError) {
    if (error.walk((cause) => cause instanceof TimeoutError)) return `no answer within ${timeoutMs} ms`;
    const rpc = error.walk((cause) => cause instanceof RpcRequestError);
    if (rpc instanceof RpcRequestError) return clip(`error ${rpc.code}: ${rpc.details}`);
    const http = error.walk((cause) => cause instanceof HttpRequestError);
    if (http instanceof HttpRequestError) {
      return http.status === undefined ? "the connection failed" : `HTTP status ${http.status}`;
    }
    return clip(error.shortMessage);
  }
  return "an unexpected failure";
}

const revertAbi = parseAbi(["error Error(string reason)", "error Panic(uint256 code)"]);

/** A revert payload as a person can read it: the reason string, the panic code, or a custom error's selector. */
export function describeRevertData(data: Hex): string {
  if (size(data) === 0) return "reverted without a reason";
  try {
    const decoded = decodeErrorResult({ abi: revertAbi, data });
    if (decoded.errorName === "Error") return clip(decoded.args[0]);
    return `panic 0x${decoded.args[0].toString(16)}`;
  } catch {
    if (size(data) < 4) return clip(`reverted with ${data}`);
    return clip(`custom error ${slice(data, 0, 4)} (${data})`);
  }
}
