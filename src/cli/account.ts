import { parseArgs } from "node:util";
import { revokeAccountToken, rotateAccountToken } from "../actions/accountTokens";
import { createToken, requireAccountById, revokeAccountTokenById, tokensOf } from "../actions/tokens";
import { ConfigError, loadConfig } from "../config";
import { ADMIN_SECRET_HEADER } from "../http/admin";
import { createAccount } from "../storage/accounts";
import type { Database } from "../storage/database";
import { folderOwner, readAdminSecret } from "../storage/dataFolder";
import { openStorage } from "../storage/open";

const USAGE = [
  "usage: npm run account -- create --name <account name>",
  "       npm run account -- rotate-token --id <account id>   (a new authToken; the old one stops working)",
  "       npm run account -- revoke-token --id <account id>   (the first token stops until the next rotate-token)",
  "       npm run account -- token-create --id <account id> --name <token name> --scope admin|read [--expires-at <ISO time>]",
  "       npm run account -- token-list --id <account id>     (names, scopes, last use; never the secrets)",
  "       npm run account -- token-revoke --id <account id> --token-id <token id>",
].join("\n");
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);

interface AccountWithToken {
  id: string;
  name: string;
  authToken: string;
}

/** One request to the loopback admin route of the service that holds the embedded database. */
type ServiceCall = <T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => Promise<T>;

/** With the embedded database held by a running service, the service does the work; else undefined. */
function runningService(): ServiceCall | undefined {
  const config = loadConfig();
  const owner = config.databaseUrl ? undefined : folderOwner(config.dataDir);
  const secret = readAdminSecret(config.dataDir);
  if (owner?.role !== "service" || owner.port === undefined || owner.host === undefined || !secret) return undefined;
  const host = owner.host;
  const target = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return async <T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown) => {
    const response = await fetch(`http://${target}:${owner.port}${path}`, {
      method,
      headers: {
        [ADMIN_SECRET_HEADER]: secret,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json()) as { message?: string; data?: T };
    if (!response.ok || !answer.data)
      throw new Error(`the running service refused: ${answer.message ?? response.status}`);
    return answer.data;
  };
}

/** Opens the database itself (PostgreSQL, or an embedded folder no service holds) for one piece of work. */
async function directly<T>(work: (db: Database) => Promise<T>): Promise<T> {
  const storage = await openStorage(loadConfig(), "cli");
  try {
    return await work(storage.db);
  } finally {
    await storage.close();
  }
}

function showToken(account: AccountWithToken, what: string): void {
  console.log(`${what} "${account.name}" (id ${account.id}).`);
  console.log("Its authToken is shown only this once; keep it safe:");
  console.log(account.authToken);
}

async function create(name: string | undefined): Promise<void> {
  const trimmed = name?.trim();
  if (!trimmed) throw new UsageError(`--name is required\n${USAGE}`);
  if (trimmed.length > 100) throw new UsageError("--name must be at most 100 characters");
  const service = runningService();
  const account = service
    ? await service<AccountWithToken>("POST", "/internal/accounts", { name: trimmed })
    : await directly((db) => createAccount(db, trimmed, tokenContext(db).now()));
  showToken(account, "Created account");
}

async function rotate(id: string): Promise<void> {
  const service = runningService();
  const account = service
    ? await service<AccountWithToken>("POST", `/internal/accounts/${encodeURIComponent(id)}/token`)
    : await directly((db) => rotateAccountToken(tokenContext(db), id));
  console.log("The previous authToken is refused from now on.");
  showToken(account, "New token for account");
}

async function revoke(id: string): Promise<void> {
  const service = runningService();
  if (service) await service("DELETE", `/internal/accounts/${encodeURIComponent(id)}/token`);
  else await directly((db) => revokeAccountToken(db, id));
  console.log(`Account ${id} has no authToken now: every management request with the old one is refused.`);
  console.log("Give it a new one with: npm run account -- rotate-token --id <account id>");
}

interface CreatedToken {
  tokenId: string;
  name: string;
  scope: string;
  expiresAt: string | null;
  authToken: string;
}

interface ListedToken {
  tokenId: string;
  name: string;
  scope: string;
  first: boolean;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
}

/**
 * The account use cases on the database itself. No service runs (it would have been asked instead), so there is no
 * service clock to read: the command is its own start, and the wall clock is the clock a service would have had.
 */
function tokenContext(db: Database) {
  return { db, now: Date.now };
}

async function tokenCreate(id: string, values: { name?: string; scope?: string; "expires-at"?: string }) {
  const name = values.name?.trim();
  if (!name) throw new UsageError(`--name is required\n${USAGE}`);
  if (values.scope !== "admin" && values.scope !== "read") throw new UsageError("--scope must be admin or read");
  const body = {
    name,
    scope: values.scope,
    ...(values["expires-at"] === undefined ? {} : { expiresAt: values["expires-at"] }),
  };
  const service = runningService();
  const token = service
    ? await service<CreatedToken>("POST", `/internal/accounts/${encodeURIComponent(id)}/tokens`, body)
    : await directly(async (db) => createToken(tokenContext(db), await requireAccountById(tokenContext(db), id), body));
  console.log(
    `Created token "${token.name}" (id ${token.tokenId}, scope ${token.scope}` +
      `${token.expiresAt ? `, expires ${token.expiresAt}` : ""}).`,
  );
  console.log("It is shown only this once; keep it safe:");
  console.log(token.authToken);
}

async function tokenList(id: string) {
  const service = runningService();
  const tokens = service
    ? await service<ListedToken[]>("GET", `/internal/accounts/${encodeURIComponent(id)}/tokens`)
    : await directly(async (db) => tokensOf(tokenContext(db), await requireAccountById(tokenContext(db), id)));
  for (const token of tokens) {
    console.log(
      [
        token.tokenId,
        token.name,
        token.scope,
        `created ${token.createdAt}`,
        `last used ${token.lastUsedAt ?? "never"}`,
        token.expiresAt ? `expires ${token.expiresAt}` : "no expiry",
      ].join("  "),
    );
  }
}

async function tokenRevoke(id: string, tokenId: string | undefined) {
  const wanted = tokenId?.trim();
  if (!wanted) throw new UsageError(`--token-id is required\n${USAGE}`);
  const service = runningService();
  if (service) {
    await service("DELETE", `/internal/accounts/${encodeURIComponent(id)}/tokens/${encodeURIComponent(wanted)}`);
  } else {
    await directly(async (db) =>
      revokeAccountTokenById(tokenContext(db), await requireAccountById(tokenContext(db), id), wanted),
    );
  }
  console.log(`Token ${wanted} is revoked: every request with it is refused from now on.`);
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      id: { type: "string" },
      scope: { type: "string" },
      "expires-at": { type: "string" },
      "token-id": { type: "string" },
    },
  });
  if (positionals.length !== 1) throw new UsageError(USAGE);
  const command = positionals[0];
  if (command === "create") return create(values.name);
  const byId: Record<string, (id: string) => Promise<void>> = {
    "rotate-token": rotate,
    "revoke-token": revoke,
    "token-create": (id) => tokenCreate(id, values),
    "token-list": tokenList,
    "token-revoke": (id) => tokenRevoke(id, values["token-id"]),
  };
  const run = command === undefined ? undefined : byId[command];
  if (!run) throw new UsageError(USAGE);
  const id = values.id?.trim();
  if (!id) throw new UsageError(`--id is required\n${USAGE}`);
  return run(id);
}

class UsageError extends Error {}

main().catch((error) => {
  const known = error instanceof UsageError || error instanceof ConfigError;
  console.error(known ? error.message : `Cannot do it: ${(error as Error).message}`);
  process.exit(known ? 2 : 1);
});
