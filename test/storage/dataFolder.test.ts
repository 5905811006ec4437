import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { DataFolderBusyError, folderOwner, takeDataFolder } from "../../src/storage/dataFolder";
import { openStorage } from "../../src/storage/open";
import { processStartTime } from "../../src/storage/processIdentity";

const ROOT = path.resolve(import.meta.dirname, "../..");
const folders: string[] = [];
const children: ChildProcess[] = [];
after(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
const freshFolder = () => {
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-folder-"));
  folders.push(folder);
  return folder;
};
const writeLock = (dataDir: string, owner: Record<string, unknown>) =>
  writeFileSync(path.join(dataDir, "owner.lock"), JSON.stringify(owner), { mode: 0o600 });

/** Every folder and file under `root` (root included) with a mode other than 0700 / 0600. */
function notPrivate(root: string): string[] {
  const wrong: string[] = [];
  const walk = (entry: string) => {
    const stat = statSync(entry);
    const mode = stat.mode & 0o7777;
    if (mode !== (stat.isDirectory() ? 0o700 : 0o600))
      wrong.push(`${path.relative(root, entry) || "."} ${mode.toString(8)}`);
    if (stat.isDirectory()) for (const name of readdirSync(entry)) walk(path.join(entry, name));
  };
  walk(root);
  return wrong;
}

test("the embedded database's folder and every file in it are private after opening, whatever existed", async () => {
  const volume = freshFolder();
  // DATA_DIR names a link to the volume, as a deployment may.
  const dataDir = path.join(freshFolder(), "data");
  symlinkSync(volume, dataDir);
  // A folder made by hand or mounted, open to everyone, with a stray file and folder in it.
  chmodSync(dataDir, 0o777);
  writeFileSync(path.join(dataDir, "notes.txt"), "x", { mode: 0o666 });
  chmodSync(path.join(dataDir, "notes.txt"), 0o666);
  mkdirSync(path.join(dataDir, "old"), { mode: 0o755 });
  chmodSync(path.join(dataDir, "old"), 0o755);
  const storage = await openStorage({ dataDir, databaseUrl: undefined }, "cli");
  try {
    await storage.db.query("CREATE TABLE written_after_open (id int)");
    await storage.db.query("INSERT INTO written_after_open SELECT generate_series(1, 1000)");
    assert.ok(readdirSync(path.join(dataDir, "pglite")).length > 0, "PGlite wrote its files");
    assert.deepEqual(notPrivate(volume), []);
  } finally {
    await storage.close();
  }
  assert.deepEqual(notPrivate(volume), [], "nothing the database wrote up to its close is readable by others");
});

test("a lock naming this very process (a container's pid 1 after a kill -9) does not block the start", () => {
  const dataDir = freshFolder();
  writeLock(dataDir, { pid: process.pid, startTime: "an earlier life", role: "service", host: "0.0.0.0", port: 1 });
  const folder = takeDataFolder(dataDir, "service");
  try {
    assert.equal(folderOwner(dataDir), undefined, "this process is not its own competitor");
  } finally {
    folder.release();
  }
});

test("a lock whose pid now belongs to an unrelated process does not block the start", async () => {
  const dataDir = freshFolder();
  const unrelated = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(unrelated);
  const pid = unrelated.pid as number;
  // The dead holder had this pid; it started at another time than the process that has the pid now.
  writeLock(dataDir, { pid, startTime: `${processStartTime(pid)}-not`, role: "service" });
  assert.equal(folderOwner(dataDir), undefined);
  const folder = takeDataFolder(dataDir, "service");
  folder.release();
  unrelated.kill("SIGKILL");
});

test("a live holder keeps the folder; killed with SIGKILL, its lock no longer counts", async () => {
  const dataDir = freshFolder();
  const holder = spawn(process.execPath, ["--import", "tsx", "test/helpers/holdDataFolder.ts", dataDir], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(holder);
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.on("data", (chunk) => String(chunk).includes("held") && resolve());
    holder.once("exit", (code) => reject(new Error(`holder exited with ${code}`)));
  });
  assert.throws(
    () => takeDataFolder(dataDir, "service"),
    (error) => error instanceof DataFolderBusyError && error.message.includes(`in use by process ${holder.pid} (cli)`),
  );
  assert.equal(folderOwner(dataDir)?.pid, holder.pid);

  const exited = new Promise((resolve) => holder.once("exit", resolve));
  holder.kill("SIGKILL");
  await exited;
  const folder = takeDataFolder(dataDir, "service");
  try {
    assert.equal(folderOwner(dataDir), undefined, "the lock is ours now (and we do not count as another holder)");
    assert.throws(() => takeDataFolder(dataDir, "cli"), /in use by process \d+ \(this process\)/);
  } finally {
    folder.release();
  }
});
