// A service whose stdout nobody reads any more (the process that started it exited first, `npm start | tee` stopped,
// a log collector restarted) must still stop on SIGTERM: its last log lines fail with EPIPE or ECONNRESET, and
// nothing on the way out may wait for them. Here the test's end of the stdout pipe is closed before the SIGTERM, and
// while the service logs its shutdown.
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { embeddedEnv, startService } from "../helpers/service";

const SHUTDOWN_TIMEOUT_MS = 3_000;
/** The shutdown's bound, the watchdog's second past it, and time for the process to be reaped on a busy machine. */
const EXIT_WITHIN_MS = SHUTDOWN_TIMEOUT_MS + 1_000 + 1_500;

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

async function startLogging() {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-dead-log-"));
  folders.push(dataDir);
  const env = embeddedEnv(dataDir, { LOG_LEVEL: "info", SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) });
  const service = await startService(env);
  await service.outputMatching(/paymaster service listening/);
  const exited = new Promise<string>((resolve) =>
    service.process.once("exit", (code, signal) => resolve(`${code ?? signal}`)),
  );
  return { service, exited };
}

/** How the process ended within EXIT_WITHIN_MS of `sinceMs`, or "still running" (then it is killed). */
async function endWithin(process: ChildProcess, exited: Promise<string>, sinceMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("still running"), EXIT_WITHIN_MS - (Date.now() - sinceMs));
  });
  const end = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (end === "still running") process.kill("SIGKILL");
  return { end, ms: Date.now() - sinceMs };
}

test("with the stdout reader gone before the SIGTERM, the service exits 0 within the shutdown deadline", async () => {
  const { service, exited } = await startLogging();
  service.process.stdout?.destroy();
  const sentMs = Date.now();
  service.process.kill("SIGTERM");
  const { end, ms } = await endWithin(service.process, exited, sentMs);
  assert.equal(end, "0", `ended: ${end} after ${ms} ms`);
});

test("with the stdout reader gone while the service logs its shutdown, it exits 0 within the deadline", async () => {
  // The pipe closes at two moments of the shutdown: as its first line is written, and among its lines.
  for (const delayMs of [0, 5]) {
    const { service, exited } = await startLogging();
    const sentMs = Date.now();
    service.process.kill("SIGTERM");
    setTimeout(() => service.process.stdout?.destroy(), delayMs);
    const { end, ms } = await endWithin(service.process, exited, sentMs);
    assert.equal(end, "0", `closed ${delayMs} ms after the SIGTERM; ended: ${end} after ${ms} ms`);
  }
});
