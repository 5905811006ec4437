import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import {
  AddressField,
  BadRequest,
  NotFound,
  Success,
  Text,
  TooManyRequests,
  tokenAndApiKey,
  Unauthorized,
  withProblem,
} from "./common";
import { PaymasterView } from "./paymasters";

/** The funding-wallet flow: get a message to sign, send back its signature to link the signing wallet. */

const FundingMessageParams = Type.Object({
  paymasterId: Type.String({ description: "The paymaster's id (UUID); any other id is not found" }),
});

export const fundingMessageSchema = {
  summary: "Get a message whose signature links a funding wallet",
  tags: ["funding"],
  security: tokenAndApiKey,
  params: FundingMessageParams,
  response: {
    200: Success("Funding message sent", Type.Object({ fundingMessage: Type.String() })),
    401: Unauthorized(messages.authTokenAndApiKeyRequired),
    404: NotFound(messages.paymasterNotFound),
    429: TooManyRequests,
  },
};

export const LinkFundingWalletBody = Type.Object({
  paymasterId: Text(100, { description: "The paymaster's id (UUID)" }),
  type: Type.Literal("paymasterFundingId"),
  signature: withProblem(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      pattern: "^0x[0-9a-fA-F]*$",
      description: "EIP-191 signature of the latest funding message, as hex",
    }),
    { minLength: "must not be empty", pattern: "must be a 0x-prefixed hex string" },
  ),
  address: AddressField,
});
export type LinkFundingWalletBody = Static<typeof LinkFundingWalletBody>;

export const linkFundingWalletSchema = {
  summary: "Link the wallet that signed the latest funding message",
  tags: ["funding"],
  security: tokenAndApiKey,
  body: LinkFundingWalletBody,
  response: {
    200: Success("Paymaster updated successfully", PaymasterView),
    400: BadRequest(messages.invalidSignature, "signature must be a 0x-prefixed hex string"),
    401: Unauthorized(messages.authTokenAndApiKeyRequired),
    404: NotFound(messages.paymasterNotFound, messages.userNotFound),
    429: TooManyRequests,
  },
};
