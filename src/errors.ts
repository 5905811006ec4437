/**
 * One error model for the whole service. Every deliberate error is a `PaymasterError`: it carries the code a client
 * sees on the wire (an HTTP status for the management API, a JSON-RPC code for the RPC), the HTTP status it is sent
 * with, and the `cause` that led to it (logged, never sent). Anything that is not a PaymasterError is a bug or an
 * outage and is answered as a 500 / -32603 without its message.
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
  paymasterNotFound: "Paymaster not found",
  policyNotFound: "Policy not found",
  policyNameExists: "Policy name already exists",
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
export const unauthorized = (message: string) => new ApiError(401, message);
export const notFound = (message: string) => new ApiError(404, message);

/** An ApiError whose status and message the interface fixes; each has its own class so that code names the case. */
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
export class WhitelistedMethodsMustBeArrayError extends fixedError(400, messages.whitelistedMethodsMustBeArray) {}
/** The interface answers an unknown contract with 400, not 404. */
export class ContractNotFoundError extends fixedError(400, messages.contractNotFound) {}
export class InvalidSignatureError extends fixedError(400, messages.invalidSignature) {}
export class UserNotFoundError extends fixedError(404, messages.userNotFound) {}
export class ActiveMustBeBooleanError extends fixedError(400, messages.activeMustBeBoolean) {}
export class WebhookIdMustBeStringError extends fixedError(400, messages.webhookIdMustBeString) {}
export class WebhookNotFoundError extends fixedError(404, messages.webhookNotFound) {}
export class PaymasterNotFoundError extends fixedError(404, messages.paymasterNotFound) {}
export class PolicyNotFoundError extends fixedError(404, messages.policyNotFound) {}
export class PolicyNameExistsError extends fixedError(400, messages.policyNameExists) {}
