import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { Address, Uuid } from "../primitives";
import { BadRequest, Name, Success, Text, TooManyRequests, tokenOnly, Unauthorized } from "./common";

/** Endpoints 1 and 2: a dApp's paymasters, listed and created (under `paymasterParameters` and `paymaster`). */

const ApiKey = Type.String({
  description: "The key that names this paymaster in RPC URLs and the apiKey header",
  examples: ["Xq3cD0d8kQ2mT5v1Lw9zR7bN4yH6jF2s"],
});

export const PaymasterView = Type.Object({
  name: Type.String(),
  chainId: Type.Integer({ examples: [31337] }),
  apiKey: ApiKey,
  paymasterId: Uuid,
  fundingWalletAddress: Type.Union([Address, Type.Null()], {
    description: "The wallet linked by a signed funding message, or null",
  }),
  active: Type.Boolean({ description: "false while the whole paymaster is paused: every RPC request is refused" }),
  sponsor: Type.Union(
    [
      Type.Object({ name: Type.String(), icon: Type.Optional(Type.String({ description: "an RFC 2397 data URI" })) }),
      Type.Null(),
    ],
    { description: "What ERC-7677's stub gives wallets as the sponsor (PATCH type sponsorInfo); null until set" },
  ),
  allowedOrigins: Type.Array(Type.String(), {
    description: "The web origins browsers may call the RPC URL from; empty: any origin",
  }),
  requireOrigin: Type.Boolean({ description: "true: calls without an Origin header are refused" }),
  validityBlocks: Type.Union([Type.Integer(), Type.Null()], {
    description:
      "How many blocks an EntryPoint v0.9 signature of SPONSORED mode stays valid (a window in block numbers); null: " +
      "windows in seconds",
  }),
});
export type PaymasterView = Static<typeof PaymasterView>;

export const CreatePaymasterBody = Type.Object({
  name: Name,
  type: Type.Literal("HYBRID", { description: "The only paymaster type: sponsored and ERC-20 modes both" }),
  chainId: Type.Integer({ description: "A chain this service sponsors on", examples: [31337] }),
  version: Text(32, { examples: ["1.0.0"] }),
});
export type CreatePaymasterBody = Static<typeof CreatePaymasterBody>;

const CreatedPaymaster = Type.Object({
  name: Type.String(),
  chainId: Type.Integer(),
  apiKey: ApiKey,
  paymasterId: Uuid,
});

const unauthorized = Unauthorized(messages.authTokenRequired);

export const listPaymastersSchema = {
  summary: "List the account's paymasters",
  tags: ["paymasters"],
  security: tokenOnly,
  response: {
    200: Success("DApp list fetched", Type.Array(PaymasterView)),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const createPaymasterSchema = {
  summary: "Create a paymaster (a dApp) on a chain",
  tags: ["paymasters"],
  security: tokenOnly,
  body: CreatePaymasterBody,
  response: {
    200: Success("DApp registered successfully", CreatedPaymaster),
    400: BadRequest(
      messages.paymasterNameExists,
      messages.chainNotSupported,
      "name is required",
      "chainId must be an integer",
    ),
    401: unauthorized,
    429: TooManyRequests,
  },
};
