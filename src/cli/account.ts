import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../config";
import { ADMIN_SECRET_HEADER } from "../http/admin";
import { createAccount } from "../storage/accounts";
import { folderOwner, readAdminSecret } from "../storage/dataFolder";
import { openStorage } from "../storage/open";

const USAGE = "usage: npm run account -- create --name <account name>";
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);

interface CreatedAccount {
  id: string;
  name: string;
  authToken: string;
}

/** With the embedded database held by a running service, the service creates the account for us. */
async function createThroughService(host: string, port: number, secret: string, name: string): Promise<CreatedAccount> {
  const target = WILDCARD_HOSTS.has(host) ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  const response = await fetch(`http://${target}:${port}/internal/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json", [ADMIN_SECRET_HEADER]: secret },
    body: JSON.stringify({ name }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { message?: string; data?: CreatedAccount };
  if (!response.ok || !body.data) throw new Error(`the running service refused: ${body.message ?? response.status}`);
  return body.data;
}

async function createDirectly(name: string): Promise<CreatedAccount> {
  const storage = await openStorage(loadConfig(), "cli");
  try {
    return await createAccount(storage.db, name);
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({ allowPositionals: true, options: { name: { type: "string" } } });
  if (positionals[0] !== "create" || positionals.length !== 1) throw new UsageError(USAGE);
  const name = values.name?.trim();
  if (!name) throw new UsageError(`--name is required\n${USAGE}`);
  if (name.length > 100) throw new UsageError("--name must be at most 100 characters");

  const config = loadConfig();
  const owner = config.databaseUrl ? undefined : folderOwner(config.dataDir);
  const secret = readAdminSecret(config.dataDir);
  let account: CreatedAccount;
  if (owner?.role === "service" && owner.port !== undefined && owner.host !== undefined && secret) {
    account = await createThroughService(owner.host, owner.port, secret, name);
  } else {
    account = await createDirectly(name);
  }
  console.log(`Created account "${account.name}" (id ${account.id}).`);
  console.log("Its authToken is shown only this once; keep it safe:");
  console.log(account.authToken);
}

class UsageError extends Error {}

main().catch((error) => {
  const known = error instanceof UsageError || error instanceof ConfigError;
  console.error(known ? error.message : `Cannot create the account: ${(error as Error).message}`);
  process.exit(known ? 2 : 1);
});
