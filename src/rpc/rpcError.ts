import { PaymasterError } from "../errors";

/**
 * A JSON-RPC error the client may see as is. Codes follow JSON-RPC 2.0; never -32603 or -32005 for a deliberate
 * refusal, and never HTTP 5xx/429, because viem retries those and the SDK hides messages on HTTP 200. The one 429 is
 * the throttle of wrong apiKeys (LIMIT_EXCEEDED), where a later retry is what the client should do
 * (docs/sponsorship-rpc.md, 'Errors').
 */
export class RpcError extends PaymasterError {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = 400,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
/** EIP-1474 "limit exceeded": too many wrong apiKeys from this address (HTTP 429, with Retry-After). */
export const LIMIT_EXCEEDED = -32005;
/** Server-defined: the path names no paymaster, or one of another chain. */
export const UNKNOWN_PAYMASTER = -32001;

export const invalidParams = (message: string) => new RpcError(INVALID_PARAMS, message);
/**
 * EIP-1474 "transaction rejected": the rules refused the operation. Answered by the ERC-7677 methods, which have no `0x`
 * result for a refusal, and by pm_sponsorUserOperation in permissionless's form (an EntryPoint address as params[1]),
 * whose client reads no `0x` result; the message carries the rule's reason.
 */
export const SPONSORSHIP_REFUSED = -32003;
/**
 * Server-defined (EIP-1474 "resource unavailable"): gas could not be estimated, or a token price read, because the
 * chain's node or bundler is unreachable, too slow or answered nonsense. Answered with HTTP 503, which clients such as
 * viem retry: unlike a refusal, this is a transient failure on our side, and a retry may well succeed. Each attempt
 * ends within GAS_ESTIMATION_TIMEOUT_MS.
 */
export const ESTIMATION_UNAVAILABLE = -32002;
