import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { findAccountByTokenHash, hashToken } from "../../src/storage/accounts";
import { openStorage } from "../../src/storage/open";
import { embeddedEnv, runScript, startService } from "../helpers/service";

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-embedded-"));
after(() => rmSync(dataDir, { recursive: true, force: true }));
const env = embeddedEnv(dataDir);
const lastLine = (text: string) => text.trim().split("\n").at(-1) ?? "";
/** The line after the development account's announcement: the service's own log lines (a warning) may follow it. */
const devTokenLine = (text: string) => /shown only this once:\n(\S+)/.exec(text)?.[1] ?? "";

async function api(baseUrl: string, method: string, route: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${baseUrl}/api/v2/public/sdk/${route}`, {
    method,
    headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as { data?: unknown; message: string } };
}

test("embedded service: development account, account command, restart keeps the data, one owner per folder", async () => {
  const first = await startService(env);
  let devToken = "";
  let acmeId = "";
  let acmeToken = "";
  try {
    devToken = devTokenLine(first.output());
    assert.match(devToken, /^pm_[A-Za-z0-9_-]{43}$/, "a fresh start prints the development account's token");

    const created = await api(
      first.baseUrl,
      "POST",
      "paymasterParameters",
      { authToken: devToken },
      {
        name: "survivor",
        type: "HYBRID",
        chainId: 31337,
        version: "1.0.0",
      },
    );
    assert.equal(created.status, 200);

    // While the service holds the folder, the account command goes through it.
    const cli = await runScript("src/cli/account.ts", ["create", "--name", "acme"], env);
    assert.equal(cli.code, 0, cli.stderr);
    acmeToken = lastLine(cli.stdout);
    assert.match(acmeToken, /^pm_/);
    const acmeList = await api(first.baseUrl, "GET", "paymasterParameters", { authToken: acmeToken });
    assert.deepEqual([acmeList.status, acmeList.body.data], [200, []]);
    acmeId = /\(id ([0-9a-f-]{36})\)/.exec(cli.stdout)?.[1] ?? "";
    assert.ok(acmeId, cli.stdout);

    // Rotating through the running service: the old token is refused at once (it was in the service's cache), the
    // new one works.
    const rotated = await runScript("src/cli/account.ts", ["rotate-token", "--id", acmeId], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    acmeToken = lastLine(rotated.stdout);
    assert.match(acmeToken, /^pm_/);
    const old = await api(first.baseUrl, "GET", "paymasterParameters", { authToken: lastLine(cli.stdout) });
    assert.equal(old.status, 401, "the rotated token is refused");
    const fresh = await api(first.baseUrl, "GET", "paymasterParameters", { authToken: acmeToken });
    assert.equal(fresh.status, 200, "the new token works");

    // A second service on the same folder is refused instead of corrupting it.
    const second = await runScript("src/main.ts", [], env);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /is in use by process/);
  } finally {
    assert.equal(await first.stop(), 0, "SIGTERM stops the service cleanly");
  }
  assert.equal(existsSync(path.join(dataDir, "owner.lock")), false, "the lock is released on shutdown");

  // With no service running, the command opens the folder itself.
  const offline = await runScript("src/cli/account.ts", ["create", "--name", "offline"], env);
  assert.equal(offline.code, 0, offline.stderr);
  const offlineToken = lastLine(offline.stdout);
  // And revokes a token itself.
  const revoked = await runScript("src/cli/account.ts", ["revoke-token", "--id", acmeId], env);
  assert.equal(revoked.code, 0, revoked.stderr);

  const restarted = await startService(env);
  try {
    assert.doesNotMatch(restarted.output(), /pm_/, "no new development account once accounts exist");
    const list = await api(restarted.baseUrl, "GET", "paymasterParameters", { authToken: devToken });
    assert.deepEqual(
      (list.body.data as { name: string }[]).map((p) => p.name),
      ["survivor"],
      "data survives a restart",
    );
    const offlineList = await api(restarted.baseUrl, "GET", "paymasterParameters", { authToken: offlineToken });
    assert.equal(offlineList.status, 200, "the account made while the service was down works");
    const revokedList = await api(restarted.baseUrl, "GET", "paymasterParameters", { authToken: acmeToken });
    assert.equal(revokedList.status, 401, "the token revoked while the service was down is refused");
  } finally {
    await restarted.stop();
  }

  // Tokens are stored hashed: the clear token appears nowhere in the database.
  const storage = await openStorage({ dataDir }, "cli");
  try {
    assert.ok(await findAccountByTokenHash(storage.db, hashToken(devToken), Date.now()));
    const rows = await storage.db.query<{ token_hash: string }>("SELECT token_hash FROM account_tokens");
    assert.equal(rows.length, 2, "two accounts' first tokens; the revoked one's row is gone");
    for (const row of rows) assert.ok(![devToken, offlineToken, acmeToken].includes(row.token_hash));
  } finally {
    await storage.close();
  }
  assert.equal(statSync(path.join(dataDir, "admin-secret")).mode & 0o077, 0, "the admin secret is owner-only");
});

test("account command: usage errors exit 2 with a message", async () => {
  const noName = await runScript("src/cli/account.ts", ["create"], env);
  assert.equal(noName.code, 2);
  assert.match(noName.stderr, /--name is required/);
  const unknown = await runScript("src/cli/account.ts", ["delete", "--name", "x"], env);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /usage: npm run account -- create --name/);
});

test("bad configuration stops the start with a message naming the variable", async () => {
  const badPort = await runScript("src/main.ts", [], { ...env, PORT: "http" });
  assert.equal(badPort.code, 1);
  assert.match(badPort.stderr, /PORT must be a whole number/);
  const badUrl = await runScript("src/main.ts", [], { ...env, DATABASE_URL: "mysql://x" });
  assert.equal(badUrl.code, 1);
  assert.match(badUrl.stderr, /DATABASE_URL must start with postgres/);
});
