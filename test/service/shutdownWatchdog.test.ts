// The shutdown deadline must end the process even when its main thread cannot run a timer any more: here a process
// arms the watchdog and then sleeps in Atomics.wait inside its exit handler, as the service's stop did when its last
// log flush retried for ever.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { test } from "node:test";

const STUCK_EXIT = path.resolve(import.meta.dirname, "../helpers/stuckExit.ts");

test("the watchdog kills a process whose exit is stuck in Atomics.wait, on time", async () => {
  const watchdogMs = 1_500;
  const child = spawn(process.execPath, ["--import", "tsx", STUCK_EXIT, String(watchdogMs)], { stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const startedMs = Date.now();
  const late = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.once("exit", (_code, signal) => resolve(signal)),
  );
  clearTimeout(late);
  const ms = Date.now() - startedMs;
  assert.match(stdout, /stuck/, "the process reached its exit");
  assert.equal(signal, "SIGKILL", `ended by ${signal} after ${ms} ms: ${stderr}`);
  assert.match(stderr, /the watchdog kills the process/);
  // Counted from the spawn, which includes loading tsx: the kill comes at the watchdog's time, not at the test's 30 s.
  assert.ok(ms >= watchdogMs && ms < watchdogMs + 8_000, `killed after ${ms} ms`);
});
