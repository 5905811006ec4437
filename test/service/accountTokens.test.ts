import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { embeddedEnv, runScript, startService } from "../helpers/service";

/**
 * The account command's tokens: create (admin or read, shown once), list (never the secrets) and revoke, through the
 * running service that holds the embedded database, and on the folder itself while no service holds it.
 */
const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-tokens-"));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const env = embeddedEnv(dataDir);
const lastLine = (text: string) => text.trim().split("\n").at(-1) ?? "";
const account = (args: string[]) => runScript("src/cli/account.ts", args, env);

async function call(baseUrl: string, method: string, route: string, token: string, body?: unknown) {
  const response = await fetch(`${baseUrl}/api/v2/public/sdk/${route}`, {
    method,
    headers: body === undefined ? { authToken: token } : { authToken: token, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.status;
}

test("account command: token-create, token-list and token-revoke, with and without a running service", async () => {
  const service = await startService(env);
  let accountId: string;
  try {
    const created = await account(["create", "--name", "acme"]);
    assert.equal(created.code, 0, created.stderr);
    accountId = /id ([0-9a-f-]{36})/.exec(created.stdout)?.[1] as string;
    const reader = await account(["token-create", "--id", accountId, "--name", "grafana", "--scope", "read"]);
    assert.equal(reader.code, 0, reader.stderr);
    const readToken = lastLine(reader.stdout);
    assert.match(readToken, /^pm_[A-Za-z0-9_-]{43}$/);
    const readTokenId = /id ([0-9a-f-]{36})/.exec(reader.stdout)?.[1] as string;
    assert.equal(await call(service.baseUrl, "GET", "paymasterParameters", readToken), 200);
    const write = { name: "d", type: "HYBRID", chainId: 31337, version: "1.0.0" };
    assert.equal(await call(service.baseUrl, "POST", "paymasterParameters", readToken, write), 403);

    const listed = await account(["token-list", "--id", accountId]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /first {2}admin/);
    assert.match(listed.stdout, new RegExp(`${readTokenId} {2}grafana {2}read .*last used 20`));
    assert.doesNotMatch(listed.stdout, /pm_/, "no secret is listed");

    const revoked = await account(["token-revoke", "--id", accountId, "--token-id", readTokenId]);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.equal(await call(service.baseUrl, "GET", "paymasterParameters", readToken), 401, "refused at once");
    const unknown = await account(["token-revoke", "--id", accountId, "--token-id", readTokenId]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Token not found/);
  } finally {
    await service.stop();
  }

  // No service holds the folder: the command opens it itself.
  const offline = await account([
    "token-create",
    "--id",
    accountId,
    "--name",
    "ci",
    "--scope",
    "admin",
    "--expires-at",
    "2999-01-01T00:00:00Z",
  ]);
  assert.equal(offline.code, 0, offline.stderr);
  assert.match(offline.stdout, /scope admin, expires 2999-01-01T00:00:00.000Z/);
  const list = await account(["token-list", "--id", accountId]);
  assert.match(list.stdout, /ci {2}admin .*expires 2999-01-01/);
  assert.doesNotMatch(list.stdout, /grafana/, "the revoked token is gone");

  const badScope = await account(["token-create", "--id", accountId, "--name", "x", "--scope", "owner"]);
  assert.deepEqual([badScope.code, badScope.stderr.trim()], [2, "--scope must be admin or read"]);
  const noAccount = await account(["token-list", "--id", "00000000-0000-4000-8000-000000000000"]);
  assert.equal(noAccount.code, 1);
  assert.match(noAccount.stderr, /Account not found/);
});
