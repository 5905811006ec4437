import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface RunningService {
  process: ChildProcess;
  baseUrl: string;
  /** Everything the process printed on stdout so far. */
  output(): string;
  /**
   * The output once it matches `pattern`: the start lines are logged after the service is reachable, and reach this
   * process through a pipe, so they may arrive a moment after it. Throws with the output after `timeoutMs`.
   */
  outputMatching(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<number | null>;
}

/**
 * Environment for a child that must use the embedded database, whatever the test run itself uses. Without a local chain
 * unless `extra` asks for one (LOCAL_CHAIN: "auto"): 31337 then signs without a node, as these tests and the benchmark
 * expect.
 */
export function embeddedEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "warn",
    LOCAL_CHAIN: "off",
    ...extra,
  };
  delete env.DATABASE_URL;
  return env;
}

/** How to run the service: `src/main.ts` through tsx in this checkout unless told otherwise (a built install). */
export interface ServiceCommand {
  args: string[];
  cwd: string;
  /** The Node executable; this process's own by default (a benchmark may compare Node lines). */
  node?: string;
}

const FROM_SOURCE: ServiceCommand = { args: ["--import", "tsx", "src/main.ts"], cwd: ROOT };

export interface SpawnedService {
  process: ChildProcess;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Its exit code, or the signal that ended it. */
  exited: Promise<number | NodeJS.Signals | null>;
}

/** Starts `src/main.ts` (or `command`) as a real process, without waiting for anything. */
export function spawnService(env: NodeJS.ProcessEnv, command: ServiceCommand = FROM_SOURCE): SpawnedService {
  const child = spawn(command.node ?? process.execPath, command.args, { cwd: command.cwd, env, stdio: "pipe" });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => (stdout += chunk));
  child.stderr.on("data", (chunk) => (stderr += chunk));
  // A test may close its end of a pipe on purpose (a log reader that went away).
  child.stdout.on("error", () => {});
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal)),
  );
  return { process: child, stdout: () => stdout, stderr: () => stderr, exited };
}

/**
 * Starts `src/main.ts` as a real process and waits until it says where it listens: the embedded service writes it
 * in its data folder's lock; with PostgreSQL, the start is read from its log (LOG_LEVEL must be info or lower).
 */
export async function startService(
  env: NodeJS.ProcessEnv,
  // A healthy start takes seconds alone, but tens of seconds while other test files (three at a time) share two busy
  // cores (a local chain's deployments included, 90 s has been passed at a load average of 15); past this, the start is
  // broken rather than slow.
  timeoutMs = 120_000,
  command: ServiceCommand = FROM_SOURCE,
): Promise<RunningService> {
  const spawned = spawnService(env, command);
  const child = spawned.process;
  const stdout = () => spawned.stdout();
  const exited = spawned.exited.then((end) => (typeof end === "number" ? end : null));
  const deadline = Date.now() + timeoutMs;
  const lockFile = path.join(env.DATA_DIR as string, "owner.lock");
  const running = (port: number): RunningService => ({
    process: child,
    baseUrl: `http://127.0.0.1:${port}`,
    output: stdout,
    outputMatching: async (pattern, timeoutMs = 5_000) => {
      const until = Date.now() + timeoutMs;
      while (!pattern.test(stdout())) {
        if (Date.now() > until)
          throw new Error(`the service did not print ${pattern} within ${timeoutMs} ms:\n${stdout()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return stdout();
    },
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${spawned.stderr()}`);
    const logged = /paymaster service listening on http:\/\/[^:]+:(\d+)/.exec(stdout());
    if (logged && env.DATABASE_URL) return running(Number(logged[1]));
    try {
      const owner = JSON.parse(readFileSync(lockFile, "utf8")) as { pid: number; port?: number };
      if (owner.pid === child.pid && owner.port) return running(owner.port);
    } catch {
      // not written yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`service did not start within ${timeoutMs} ms: ${spawned.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs a command of the project to the end and returns its exit code and output. */
export function runScript(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], { cwd: ROOT, env, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}
