import Type from "typebox";
import { Name } from "./common";

/** The account command's route (loopback only, behind the data folder's secret); not part of the public API. */
const CreateAccountBody = Type.Object({ name: Name });

const AdminHeaders = Type.Object({
  "x-admin-secret": Type.Optional(Type.String({ description: "The secret kept in the data folder" })),
});

export const createAccountSchema = { hide: true, body: CreateAccountBody, headers: AdminHeaders };
