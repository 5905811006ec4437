import { parseArgs } from "node:util";
import { revokeAccountToken, rotateAccountToken } from "../actions/accountTokens";
import { ConfigError, loadConfig } from "../config";
import { ADMIN_SECRET_HEADER } from "../http/admin";
import { createAccount } from "../storage/accounts";
import type { Database } from "../storage/database";
import { folderOwner, readAdminSecret } from "../storage/dataFolder";
import { openStorage } from "../storage/open";

const USAGE = [
  "usage: npm run account -- create --name <account name>",
  "       npm run account -- rotate-token --id <account id>   (a new authToken; the old one stops working)",
  "       npm run account -- revoke-token --id <account id>   (no authToken works until the next rotate-token)",
].join("\n");
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);

interface AccountWithToken {
  id: string;
  name: string;
  authToken: string;
}

/** One request to the loopback admin route of the service that holds the embedded database. */
type ServiceCall = <T>(method: "POST" | "DELETE", path: string, body?: unknown) => Promise<T>;

/** With the embedded database held by a running service, the service does the work; else undefined. */
function runningService(): ServiceCall | undefined {
  const config = loadConfig();
  const owner = config.databaseUrl ? undefined : folderOwner(config.dataDir);
  const secret = readAdminSecret(config.dataDir);
  if (owner?.role !== "service" || owner.port === undefined || owner.host === undefined || !secret) return undefined;
  const host = owner.host;
  const target = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return async <T>(method: "POST" | "DELETE", path: string, body?: unknown) => {
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
    : await directly((db) => createAccount(db, trimmed));
  showToken(account, "Created account");
}

async function rotate(id: string): Promise<void> {
  const service = runningService();
  const account = service
    ? await service<AccountWithToken>("POST", `/internal/accounts/${encodeURIComponent(id)}/token`)
    : await directly((db) => rotateAccountToken(db, id));
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

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { name: { type: "string" }, id: { type: "string" } },
  });
  if (positionals.length !== 1) throw new UsageError(USAGE);
  const command = positionals[0];
  if (command === "create") return create(values.name);
  if (command !== "rotate-token" && command !== "revoke-token") throw new UsageError(USAGE);
  const id = values.id?.trim();
  if (!id) throw new UsageError(`--id is required\n${USAGE}`);
  return command === "rotate-token" ? rotate(id) : revoke(id);
}

class UsageError extends Error {}

main().catch((error) => {
  const known = error instanceof UsageError || error instanceof ConfigError;
  console.error(known ? error.message : `Cannot do it: ${(error as Error).message}`);
  process.exit(known ? 2 : 1);
});
