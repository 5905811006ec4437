import type { FastifyRequest } from "fastify";
import { type ApiError, unauthorized } from "../errors";
import { type Account, findAccountByToken } from "../storage/accounts";
import type { Queryable } from "../storage/database";
import { findPaymasterByApiKey, type Paymaster } from "../storage/paymasters";
import { noteRejectedCredential } from "./failureThrottle";

/** Reads one of our headers; node lowercases header names, and a repeated header counts as missing. */
function header(request: FastifyRequest, name: "authtoken" | "apikey"): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Endpoints 1 and 2: the account's token alone. A token or apiKey sent and not accepted counts for the throttle. */
export async function requireAccount(db: Queryable, request: FastifyRequest, missingMessage: string): Promise<Account> {
  const token = header(request, "authtoken");
  if (!token) throw unauthorized(missingMessage);
  const account = await findAccountByToken(db, token);
  if (!account) {
    noteRejectedCredential(request);
    throw unauthorized(missingMessage);
  }
  return account;
}

export interface DappAuthOptions {
  /** The 401 text when a header is missing (the interface varies it by endpoint). */
  missingMessage: string;
  /** What a token or apiKey that is not accepted gets; by default the same 401 as a missing header. */
  rejected?: ApiError;
  /** What an apiKey that is not the account's gets, where the interface says otherwise. */
  unknownApiKey?: ApiError;
}

/** Every other endpoint: the account's token and the apiKey of one of that account's paymasters. */
export async function requireDapp(
  db: Queryable,
  request: FastifyRequest,
  options: DappAuthOptions,
): Promise<{ account: Account; paymaster: Paymaster }> {
  const token = header(request, "authtoken");
  const apiKey = header(request, "apikey");
  if (!token || !apiKey) throw unauthorized(options.missingMessage);
  const rejected = options.rejected ?? unauthorized(options.missingMessage);
  const account = await findAccountByToken(db, token);
  if (!account) {
    noteRejectedCredential(request);
    throw rejected;
  }
  const paymaster = await findPaymasterByApiKey(db, account.id, apiKey);
  if (!paymaster) {
    noteRejectedCredential(request);
    throw options.unknownApiKey ?? rejected;
  }
  return { account, paymaster };
}
