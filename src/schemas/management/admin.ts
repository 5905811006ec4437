import Type from "typebox";
import { Name } from "./common";
import { CreateTokenBody } from "./tokens";

/** The account command's route (loopback only, behind the data folder's secret); not part of the public API. */
const CreateAccountBody = Type.Object({ name: Name });

const AdminHeaders = Type.Object({
  "x-admin-secret": Type.Optional(Type.String({ description: "The secret kept in the data folder" })),
});

export const createAccountSchema = { hide: true, body: CreateAccountBody, headers: AdminHeaders };

/** Rotating or revoking an account's token names the account by its id, in the path. */
const AccountPath = Type.Object({ id: Type.String({ description: "The account's id" }) });

export const accountTokenSchema = { hide: true, params: AccountPath, headers: AdminHeaders };

/** The account's named tokens, for the account command (the same body as POST tokens). */
export const accountTokensSchema = { hide: true, params: AccountPath, headers: AdminHeaders };
export const createAccountTokenSchema = { ...accountTokensSchema, body: CreateTokenBody };
const AccountTokenPath = Type.Object({ id: Type.String(), tokenId: Type.String() });
export const revokeAccountTokenSchema = { hide: true, params: AccountTokenPath, headers: AdminHeaders };
