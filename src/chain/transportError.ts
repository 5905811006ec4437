import { BaseError, HttpRequestError, RpcRequestError, TimeoutError } from "viem";

const MAX_DETAIL = 300;

/** An upstream's words, cut to a length a reason can carry. */
export function clipDetail(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

/** What went wrong talking to an upstream JSON-RPC (a node or a bundler), without the URL viem puts in its messages. */
export function describeTransportError(error: unknown, timeoutMs: number): string {
  if (error instanceof BaseError) {
    if (error.walk((cause) => cause instanceof TimeoutError)) return `no answer within ${timeoutMs} ms`;
    const rpc = error.walk((cause) => cause instanceof RpcRequestError);
    if (rpc instanceof RpcRequestError) return clipDetail(`error ${rpc.code}: ${rpc.details}`);
    const http = error.walk((cause) => cause instanceof HttpRequestError);
    if (http instanceof HttpRequestError) {
      return http.status === undefined ? "the connection failed" : `HTTP status ${http.status}`;
    }
    return clipDetail(error.shortMessage);
  }
  return "an unexpected failure";
}
