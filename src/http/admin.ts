import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { revokeAccountToken, rotateAccountToken } from "../actions/accountTokens";
import { createToken, requireAccountById, revokeAccountTokenById, tokensOf } from "../actions/tokens";
import type { AppContext } from "../context";
import { ApiError } from "../errors";
import {
  accountTokenSchema,
  accountTokensSchema,
  createAccountSchema,
  createAccountTokenSchema,
  revokeAccountTokenSchema,
} from "../schemas/management/admin";
import { createAccount } from "../storage/accounts";
import type { CredentialCache } from "./credentialCache";
import { typed, useManagementSchemas } from "./management";

export const ADMIN_SECRET_HEADER = "x-admin-secret";
const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

function secretMatches(request: FastifyRequest, secret: string): boolean {
  const given = request.headers[ADMIN_SECRET_HEADER];
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Lets the account command create accounts, rotate and revoke their tokens while the service holds the embedded database (PGlite allows one
 * process per data folder). Loopback only, and the secret lives in the data folder, readable by its owner alone.
 */
export function adminRoutes(app: FastifyInstance, ctx: AppContext, credentials: CredentialCache): void {
  const secret = ctx.adminSecret;
  if (!secret) return;
  app.register(async (scope) => {
    useManagementSchemas(scope);
    // Who may call is decided before the body is read: a stranger gets 403 whatever it sent.
    const preValidation = async (request: FastifyRequest) => {
      if (!LOOPBACK.has(request.socket.remoteAddress ?? "") || !secretMatches(request, secret)) {
        throw new ApiError(403, "Forbidden");
      }
    };
    // The account command's tokens, first and named, are dated by the service's clock.
    const tokens = { db: ctx.db, now: () => ctx.now() };
    typed(scope).post("/internal/accounts", { schema: createAccountSchema, preValidation }, async (request) => {
      const account = await createAccount(ctx.db, request.body.name, ctx.now());
      return { statusCode: 200, message: "Account created", data: account };
    });
    // This instance forgets the old token before answering; other instances when the database's notification
    // reaches them (PostgreSQL), or before the write returns (PGlite, where this process is the only one).
    typed(scope).post(
      "/internal/accounts/:id/token",
      { schema: accountTokenSchema, preValidation },
      async (request) => {
        const account = await rotateAccountToken(tokens, request.params.id);
        credentials.forgetAccount(account.id);
        return { statusCode: 200, message: "Token rotated", data: account };
      },
    );
    typed(scope).delete(
      "/internal/accounts/:id/token",
      { schema: accountTokenSchema, preValidation },
      async (request) => {
        const account = await revokeAccountToken(ctx.db, request.params.id);
        credentials.forgetAccount(account.id);
        return { statusCode: 200, message: "Token revoked", data: account };
      },
    );
    // The account's named tokens: the same use cases as the management API's tokens routes.
    typed(scope).post(
      "/internal/accounts/:id/tokens",
      { schema: createAccountTokenSchema, preValidation },
      async (request) => {
        const accountId = await requireAccountById(tokens, request.params.id);
        return { statusCode: 200, message: "Token created", data: await createToken(tokens, accountId, request.body) };
      },
    );
    typed(scope).get(
      "/internal/accounts/:id/tokens",
      { schema: accountTokensSchema, preValidation },
      async (request) => {
        const accountId = await requireAccountById(tokens, request.params.id);
        return { statusCode: 200, message: "Token list fetched", data: await tokensOf(tokens, accountId) };
      },
    );
    typed(scope).delete(
      "/internal/accounts/:id/tokens/:tokenId",
      { schema: revokeAccountTokenSchema, preValidation },
      async (request) => {
        const accountId = await requireAccountById(tokens, request.params.id);
        const revoked = await revokeAccountTokenById(tokens, accountId, request.params.tokenId);
        credentials.forgetAccount(accountId);
        return { statusCode: 200, message: "Token revoked", data: revoked };
      },
    );
  });
}
