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

/** An error whose status and message are safe to show the client as they are. */
export class ApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message: string) => new ApiError(401, message);
export const notFound = (message: string) => new ApiError(404, message);
