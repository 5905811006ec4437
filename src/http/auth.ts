import type { FastifyInstance, FastifyRequest } from "fastify";
import { type ApiError, AuthTokenAndApiKeyRequiredError, AuthTokenRequiredError, ReadScopeError } from "../errors";
import type { SignedInAccount } from "../storage/accounts";
import type { Paymaster } from "../storage/paymasters";
import type { Credentials } from "./credentialCache";
import { noteRejectedCredential } from "./failureThrottle";
import { guard } from "./management";

/** Reads one of our headers; node lowercases header names, and a repeated header counts as missing. */
function header(request: FastifyRequest, name: "authtoken" | "apikey"): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Who made a request, as its guard found them: the audit log names them. */
export interface Caller {
  account: SignedInAccount;
  paymaster?: Paymaster;
}

const callers = new WeakMap<FastifyRequest, Caller>();

/** The account, token and paymaster a request's guard accepted; undefined before its guard ran or on a route without. */
export const callerOf = (request: FastifyRequest): Caller | undefined => callers.get(request);

/** Methods that change nothing: all a token of the read scope may send. */
const READING_METHODS = new Set(["GET", "HEAD"]);

/** A read-scope token gets 403 on every other method, before the request is read any further. */
function requireScope(request: FastifyRequest, account: SignedInAccount): void {
  if (account.token.scope !== "admin" && !READING_METHODS.has(request.method)) throw new ReadScopeError();
}

const lookups = new WeakMap<FastifyRequest, Promise<SignedInAccount | undefined>>();

/** The account of a request's token, looked up once per request (the scope check and the guard both ask). */
function accountOf(credentials: Credentials, request: FastifyRequest, token: string) {
  let lookup = lookups.get(request);
  if (!lookup) {
    lookup = credentials.account(token);
    lookups.set(request, lookup);
  }
  return lookup;
}

/**
 * A read token's write is refused before its body is read: Fastify parses the body before the guard (preValidation)
 * runs, so a body that is not JSON, of another type or over the limit got its 400 instead of the scope's 403. Only
 * the scope is checked this early; a missing or unknown token, and the apiKey, are the guard's, after the body.
 */
export function refuseReadScopeBeforeBody(api: FastifyInstance, credentials: Credentials): void {
  api.addHook("onRequest", async (request) => {
    if (READING_METHODS.has(request.method)) return;
    const token = header(request, "authtoken");
    const account = token === undefined ? undefined : await accountOf(credentials, request, token);
    if (account) requireScope(request, account);
  });
}

/** Endpoints 1 and 2: the account's token alone. A token sent and not accepted counts for the throttle. */
async function requireAccount(credentials: Credentials, request: FastifyRequest): Promise<SignedInAccount> {
  const token = header(request, "authtoken");
  if (!token) throw new AuthTokenRequiredError();
  const account = await accountOf(credentials, request, token);
  if (!account) {
    noteRejectedCredential(request);
    throw new AuthTokenRequiredError();
  }
  requireScope(request, account);
  callers.set(request, { account });
  return account;
}

export interface DappAuthOptions {
  /** The 401 when a header is missing (the interface varies its text by endpoint); by default token and apiKey. */
  missing?: new () => ApiError;
  /** What a token or apiKey that is not accepted gets; by default the same 401 as a missing header. */
  rejected?: new () => ApiError;
  /** What an apiKey that is not the account's gets, where the interface says otherwise. */
  unknownApiKey?: new () => ApiError;
}

/** Every other endpoint: the account's token and the apiKey of one of that account's paymasters. */
async function requireDapp(
  credentials: Credentials,
  request: FastifyRequest,
  options: DappAuthOptions = {},
): Promise<{ account: SignedInAccount; paymaster: Paymaster }> {
  const Missing = options.missing ?? AuthTokenAndApiKeyRequiredError;
  const Rejected = options.rejected ?? Missing;
  const token = header(request, "authtoken");
  const apiKey = header(request, "apikey");
  if (!token || !apiKey) throw new Missing();
  const account = await accountOf(credentials, request, token);
  if (!account) {
    noteRejectedCredential(request);
    throw new Rejected();
  }
  const paymaster = await credentials.paymaster(account, apiKey);
  if (!paymaster) {
    noteRejectedCredential(request);
    throw new (options.unknownApiKey ?? Rejected)();
  }
  requireScope(request, account);
  callers.set(request, { account, paymaster });
  return { account, paymaster };
}

/** The account's credentials, checked before the request is validated (src/http/management.ts, `guard`). */
export const accountGuard = (credentials: Credentials) => guard((request) => requireAccount(credentials, request));

/** A dApp's credentials, checked before the request is validated. */
export const dappGuard = (credentials: Credentials, options: DappAuthOptions = {}) =>
  guard((request) => requireDapp(credentials, request, options));
