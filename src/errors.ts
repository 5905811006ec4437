/**
 * One error model for the whole service. Every deliberate error is a `PaymasterError`: it carries the code a client
 * sees on the wire (an HTTP status for the management API, a JSON-RPC code for the RPC), the HTTP status it is sent
 * with, and the `cause` that led to it (logged, never sent). Anything that is not a PaymasterError is a bug or an
 * outage and is answered as a 500 / -32603 without its message.
 *
 * @public the base of ApiError and RpcError, for code that handles either kind.
 */
export abstract class PaymasterError extends Error {
  /** What the client matches on: the HTTP status (management API) or the JSON-RPC error code. */
  abstract readonly code: number;
  /** The HTTP status the answer is sent with. */
  abstract readonly httpStatus: number;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * Every message the management API can answer with, written once. Texts in `messages` are part of the
 * interface (clients match on them); change them only together with the spec.
 */
export const messages = {
  authTokenAndApiKeyRequired: "Auth token and API key is required in the headers",
  authTokenRequired: "Auth token is required in the headers",
  paymasterNameExists: "paymaster_name_exists",
  chainNotSupported: "Chain ID not supported",
  contractAddressExists: "Smart contract address already exists",
  contractNameExists: "Smart contract name already exists",
  whitelistedMethodsMustBeArray: "whitelistedMethods must be an array",
  contractNotFound: "Smart contract not found",
  invalidSignature: "Invalid signature",
  userNotFound: "User not found",
  activeMustBeBoolean: "active must be a boolean value",
  webhookIdMustBeString: "webhookId must be a string",
  webhookNotFound: "Webhook not found",
  eventEndpointNotFound: "Event endpoint not found",
  paymasterNotFound: "Paymaster not found",
  policyNotFound: "Policy not found",
  policyNameExists: "Policy name already exists",
  readScope: "This authToken has the read scope: it may read (GET) but not change anything",
  tokenNotFound: "Token not found",
  tokenNameExists: "A token with this name already exists",
  /** The operator's token routes (loopback only), not the public interface. */
  accountNotFound: "Account not found",
  notFound: "Route not found",
  internal: "Internal server error",
} as const;

/** A management API error: its status and message are safe to show the client as they are. */
export class ApiError extends PaymasterError {
  constructor(
    readonly statusCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
  get code(): number {
    return this.statusCode;
  }
  get httpStatus(): number {
    return this.statusCode;
  }
}

export const badRequest = (message: string) => new ApiError(400, message);

/**
 * A management request refused by its schema (src/http/management.ts): a 400 whose message names the field and the
 * problem. Fastify writes `code` and `validationContext` onto the error a validator returns (`code` only where it finds
 * none, with the status already there it writes the status back); an ApiError's code is read-only, so the write is
 * taken and changes nothing rather than throwing inside Fastify's validation.
 */
export class RequestValidationError extends ApiError {
  /** Which part of the request was refused ("body", "querystring", …), as Fastify names it. */
  validationContext?: string;

  constructor(message: string) {
    super(400, message);
  }
  override get code(): number {
    return this.statusCode;
  }
  override set code(_written: unknown) {
    // The code is the status: nothing Fastify writes here replaces it.
  }
}

/**
 * An ApiError whose status and message the interface fixes; each has its own class so that code names the case. The
 * three fixed validation texts (whitelistedMethods, active, webhookId) are carried by the request schemas instead
 * (src/schemas/management/), which answer them before any handler runs.
 */
const fixedError = (status: number, message: string) =>
  class extends ApiError {
    constructor(options?: { cause?: unknown }) {
      super(status, message, options);
    }
  };

export class AuthTokenAndApiKeyRequiredError extends fixedError(401, messages.authTokenAndApiKeyRequired) {}
export class AuthTokenRequiredError extends fixedError(401, messages.authTokenRequired) {}
export class PaymasterNameExistsError extends fixedError(400, messages.paymasterNameExists) {}
export class ChainNotSupportedError extends fixedError(400, messages.chainNotSupported) {}
export class ContractAddressExistsError extends fixedError(400, messages.contractAddressExists) {}
export class ContractNameExistsError extends fixedError(400, messages.contractNameExists) {}
/** The interface answers an unknown contract with 400, not 404. */
export class ContractNotFoundError extends fixedError(400, messages.contractNotFound) {}
export class InvalidSignatureError extends fixedError(400, messages.invalidSignature) {}
export class UserNotFoundError extends fixedError(404, messages.userNotFound) {}
export class WebhookNotFoundError extends fixedError(404, messages.webhookNotFound) {}
export class EventEndpointNotFoundError extends fixedError(404, messages.eventEndpointNotFound) {}
export class PaymasterNotFoundError extends fixedError(404, messages.paymasterNotFound) {}
export class PolicyNotFoundError extends fixedError(404, messages.policyNotFound) {}
export class AccountNotFoundError extends fixedError(404, messages.accountNotFound) {}
export class PolicyNameExistsError extends fixedError(400, messages.policyNameExists) {}
/** A token of the read scope sent with a request that would change something. */
export class ReadScopeError extends fixedError(403, messages.readScope) {}
export class TokenNotFoundError extends fixedError(404, messages.tokenNotFound) {}
export class TokenNameExistsError extends fixedError(400, messages.tokenNameExists) {}

// JSON-RPC errors: the code a client of the sponsorship endpoint sees, under the same base.

/**
 * A JSON-RPC error the client may see as is. Codes follow JSON-RPC 2.0; never -32603 or -32005 for a deliberate
 * refusal, and never HTTP 5xx/429, because viem retries those and the SDK hides messages on HTTP 200. The 429s are
 * the throttle of wrong apiKeys and a paymaster's RATE_LIMIT quotas (LIMIT_EXCEEDED), where a later retry is what the
 * client should do (docs/sponsorship-rpc.md, 'Errors').
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
/**
 * EIP-1474 "limit exceeded": too many wrong apiKeys from this address, or a RATE_LIMIT quota of the paymaster used up
 * (HTTP 429, with Retry-After).
 */
export const LIMIT_EXCEEDED = -32005;
/** Server-defined: the path names no paymaster, or one of another chain. */
export const UNKNOWN_PAYMASTER = -32001;
/**
 * Server-defined, outside EIP-1474's -32000 to -32006: the request's Origin is not one the paymaster allows, or it
 * has none and the paymaster requires one (HTTP 403).
 */
export const ORIGIN_NOT_ALLOWED = -32010;

export const invalidParams = (message: string) => new RpcError(INVALID_PARAMS, message);
/**
 * EIP-1474 "transaction rejected": the rules refused the operation. Answered by the ERC-7677 methods, which have no `0x`
 * result for a refusal, and by pm_sponsorUserOperation in permissionless's form (an EntryPoint address as params[1]),
 * whose client reads no `0x` result; the message carries the rule's reason.
 */
export const SPONSORSHIP_REFUSED = -32003;
/**
 * Server-defined (EIP-1474 "resource unavailable"), the service's "temporarily unavailable": gas could not be
 * estimated, or a token price read, because the chain's node or bundler is unreachable, too slow or answered nonsense
 * (each attempt ends within GAS_ESTIMATION_TIMEOUT_MS); or the instance is shutting down. Answered with HTTP 503, which
 * clients such as viem retry: unlike a refusal, this is a transient failure on our side, and a retry may well succeed.
 */
export const RESOURCE_UNAVAILABLE = -32002;

/** A RATE_LIMIT quota used up: HTTP 429, and the seconds until its window ends, which the answer's Retry-After gives. */
export class QuotaExceededError extends RpcError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(LIMIT_EXCEEDED, message, 429);
  }
}
