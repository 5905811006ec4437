import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../context";
import { ApiError } from "../errors";
import { createAccount } from "../storage/accounts";
import { jsonObject, requiredString } from "./validate";

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
 * Lets the account command create accounts while the service holds the embedded database (PGlite allows one
 * process per data folder). Loopback only, and the secret lives in the data folder, readable by its owner alone.
 */
export function adminRoutes(app: FastifyInstance, ctx: AppContext): void {
  const secret = ctx.adminSecret;
  if (!secret) return;
  app.post("/internal/accounts", async (request) => {
    if (!LOOPBACK.has(request.socket.remoteAddress ?? "") || !secretMatches(request, secret)) {
      throw new ApiError(403, "Forbidden");
    }
    const name = requiredString(jsonObject(request.body), "name");
    const account = await createAccount(ctx.db, name);
    return { statusCode: 200, message: "Account created", data: account };
  });
}
