import type { FastifyInstance } from "fastify";
import { createToken, revokeAccountTokenById, tokensOf } from "../actions/tokens";
import { createTokenSchema, listTokensSchema, revokeTokenSchema } from "../schemas/management/tokens";
import { accountGuard } from "./auth";
import { success } from "./envelope";
import { type Management, typed } from "./management";

/** The account's tokens: create (admin or read), list without secrets, revoke. */
export function tokenRoutes(app: FastifyInstance, { actions, credentials, transactions }: Management): void {
  const api = typed(app);
  const account = accountGuard(credentials);

  api.post("/tokens", { schema: createTokenSchema, preValidation: account.preValidation }, async (request) => {
    const created = await createToken(actions, account.of(request).id, request.body);
    return success("Token created", created);
  });

  api.get("/tokens", { schema: listTokensSchema, preValidation: account.preValidation }, async (request) => {
    return success("Token list fetched", await tokensOf(actions, account.of(request).id));
  });

  api.delete(
    "/tokens/:tokenId",
    { schema: revokeTokenSchema, preValidation: account.preValidation },
    async (request) => {
      const { id } = account.of(request);
      const revoked = await revokeAccountTokenById(actions, id, request.params.tokenId);
      // This instance forgets the token once the deletion committed, before answering; the others when the database's
      // notification reaches them.
      transactions.afterCommit(() => credentials.forgetAccount(id));
      return success("Token revoked", revoked);
    },
  );
}
