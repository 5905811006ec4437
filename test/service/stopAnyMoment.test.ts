// SIGTERM at random moments of a service's life, on one data folder with the local chain: while it starts (PGlite,
// anvil), right after it listens, and under sponsorship requests. Each stop must end the process within the shutdown
// deadline (and the watchdog's second past it), and the next start on the same folder must work.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createAccount } from "../../src/storage/accounts";
import { openStorage } from "../../src/storage/open";
import { embeddedEnv, type SpawnedService, spawnService, startService } from "../helpers/service";
import { managementCall, postSponsorship, testSender } from "../helpers/serviceClient";

const SHUTDOWN_TIMEOUT_MS = 3_000;
/** The deadline, the watchdog's second past it, and time for a busy machine to reap the process. */
const EXIT_WITHIN_MS = SHUTDOWN_TIMEOUT_MS + 1_000 + 1_500;

const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-stop-any-moment-"));
const env = embeddedEnv(dataDir, {
  LOCAL_CHAIN: "auto",
  LOG_LEVEL: "info",
  SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
});
const leftovers: SpawnedService["process"][] = [];
after(() => {
  for (const child of leftovers) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const randomMs = (from: number, to: number) => from + Math.floor(Math.random() * (to - from));

/** Sends SIGTERM and asserts the process is gone within EXIT_WITHIN_MS; `when` names the moment in the message. */
async function stopNow(service: SpawnedService, when: string): Promise<void> {
  const sentMs = Date.now();
  service.process.kill("SIGTERM");
  const end = await Promise.race([service.exited, pause(EXIT_WITHIN_MS).then(() => "still running" as const)]);
  if (end === "still running") leftovers.push(service.process);
  assert.notEqual(end, "still running", `${when}: still running ${EXIT_WITHIN_MS} ms after SIGTERM`);
  // A signal before the handlers are installed ends the process by SIGTERM itself; once installed, the stop exits 0.
  assert.ok(end === 0 || end === "SIGTERM", `${when}: ended with ${end} after ${Date.now() - sentMs} ms`);
}

/** A running service as a SpawnedService, for stopNow. */
async function started(): Promise<SpawnedService & { baseUrl: string }> {
  const service = await startService(env);
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => {
    if (service.process.exitCode !== null) resolve(service.process.exitCode);
    service.process.once("exit", (code, signal) => resolve(code ?? signal));
  });
  return { process: service.process, stdout: service.output, stderr: () => "", exited, baseUrl: service.baseUrl };
}

test("stops at random moments end within the deadline, and the next start on the folder works", async () => {
  const storage = await openStorage({ dataDir }, "cli");
  const { authToken } = await createAccount(storage.db, "stops", Date.now());
  await storage.close();

  // While it starts: a random moment in its first seconds, or as soon as it listens.
  const starting = spawnService(env);
  const untilMs = Date.now() + randomMs(500, 6_000);
  while (Date.now() < untilMs && !/listening/.test(starting.stdout())) await pause(20);
  await stopNow(starting, `during the start (${/listening/.test(starting.stdout()) ? "listening" : "starting"})`);

  // Right after it listens.
  const fresh = await started();
  await pause(randomMs(0, 300));
  await stopNow(fresh, "right after the start");

  // Under sponsorship requests: every answer is a JSON-RPC envelope, during the shutdown too.
  const busy = await started();
  const dapp = await managementCall(
    busy.baseUrl,
    "POST",
    "paymasterParameters",
    { authToken },
    { name: "stops", type: "HYBRID", chainId: 31337, version: "1.0.0" },
  );
  let stopping = false;
  let next = 0;
  const answers: unknown[] = [];
  const load = async () => {
    for (;;) {
      const n = next++;
      try {
        const response = await postSponsorship(busy.baseUrl, dapp.apiKey as string, { sender: testSender(n), id: n });
        answers.push(await response.json());
      } catch {
        // A connection the shutdown closed.
        if (stopping) return;
        throw new Error(`request ${n} failed before the stop`);
      }
    }
  };
  const loads = Array.from({ length: 8 }, load);
  await pause(randomMs(200, 1_500));
  stopping = true;
  await stopNow(busy, "during sponsorships");
  await Promise.all(loads);
  assert.ok(answers.length > 0, "no sponsorship was answered before the stop");
  for (const answer of answers) assert.equal((answer as { jsonrpc?: string }).jsonrpc, "2.0", JSON.stringify(answer));

  // The folder after all that: the service starts, answers, and stops cleanly.
  const last = await started();
  const ready = await fetch(`${last.baseUrl}/healthz`);
  assert.equal(ready.status, 200);
  await stopNow(last, "after the restarts");
  assert.equal(await last.exited, 0);
});
