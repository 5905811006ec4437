import Type, { type Static } from "typebox";
import { messages } from "../../errors";
import { Uuid } from "../primitives";
import { BadRequest, Name, NotFound, Success, TooManyRequests, tokenOnly, Unauthorized, withProblem } from "./common";
import { IsoTime } from "./isoTime";

/** An account's tokens: several, named, each admin or read-only (docs/security.md, 'Tokens'). */

const Scope = withProblem(
  Type.String({
    enum: ["admin", "read"],
    description: "admin: every request; read: GET requests only (any other method gets 403)",
  }),
  "must be one of admin, read",
);

export const CreateTokenBody = Type.Object({
  name: { ...Name, description: "Unique among the account's tokens", examples: ["monitoring"] },
  scope: Scope,
  expiresAt: Type.Optional(IsoTime("When the token stops being accepted; in the future. Leave out: never")),
});
export type CreateTokenBody = Static<typeof CreateTokenBody>;

const Nullable = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

const TokenView = Type.Object({
  tokenId: Uuid,
  name: Type.String(),
  scope: Type.Enum(["admin", "read"]),
  first: Type.Boolean({ description: "The token made with the account (always admin)" }),
  createdAt: Type.String({ description: "ISO 8601" }),
  expiresAt: Nullable("ISO 8601; null: never expires"),
  lastUsedAt: Nullable("ISO 8601, to within a minute; null: never used"),
});

const CreatedToken = Type.Object({
  tokenId: Uuid,
  name: Type.String(),
  scope: Type.Enum(["admin", "read"]),
  expiresAt: Nullable("ISO 8601; null: never expires"),
  authToken: Type.String({ description: "The token itself: shown in this answer only, stored hashed" }),
});

const TokenParams = Type.Object({
  tokenId: Type.String({ description: "The token's id (UUID); any other id is not found" }),
});

const unauthorized = Unauthorized(messages.authTokenRequired);
const Forbidden = Type.Object(
  { statusCode: Type.Literal(403), message: Type.String({ examples: [messages.readScope] }) },
  { description: "The token has the read scope" },
);
const common = { tags: ["tokens"], security: tokenOnly };

export const createTokenSchema = {
  ...common,
  summary: "Create a token (admin or read); its secret is in this answer only",
  body: CreateTokenBody,
  response: {
    200: Success("Token created", CreatedToken),
    400: BadRequest(
      messages.tokenNameExists,
      "scope must be one of admin, read",
      "expiresAt must be in the future",
      "expiresAt must be a time that exists: 2030-02 has 28 days",
    ),
    401: unauthorized,
    403: Forbidden,
    429: TooManyRequests,
  },
};

export const listTokensSchema = {
  ...common,
  summary: "List the account's tokens (never their secrets)",
  response: {
    200: Success("Token list fetched", Type.Array(TokenView)),
    401: unauthorized,
    429: TooManyRequests,
  },
};

export const revokeTokenSchema = {
  ...common,
  summary: "Revoke a token: refused at once on every instance",
  params: TokenParams,
  response: {
    200: Success("Token revoked", Type.Object({ tokenId: Uuid })),
    401: unauthorized,
    403: Forbidden,
    404: NotFound(messages.tokenNotFound),
    429: TooManyRequests,
  },
};
