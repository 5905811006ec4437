// One local anvil chain per test file, on a port the OS picks, so test files can run in parallel.
//
//   const anvil = await startAnvil();
//   after(() => anvil.stop());
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

export interface Anvil {
  rpcUrl: string;
  chainId: number;
  pid: number;
  /** Ends the process and resolves once it has exited; safe to call twice. */
  stop(): Promise<void>;
}

export interface AnvilOptions {
  chainId?: number;
  /** How long anvil may take to report its port before the start fails. */
  startTimeoutMs?: number;
}

const DEFAULT_CHAIN_ID = 31337;
const DEFAULT_START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;

/**
 * The native binary from the platform package, not node_modules/.bin/anvil: that one is a Node wrapper that spawns the
 * binary as its own child, so killing the wrapper hard (SIGKILL) would leave anvil running.
 */
function anvilBinary(): string {
  const arch = process.arch === "x64" ? "amd64" : process.arch;
  const name = process.platform === "win32" ? "anvil.exe" : "anvil";
  const require = createRequire(import.meta.url);
  try {
    const path = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/bin/${name}`);
    if (existsSync(path)) return path;
  } catch {
    // no platform package: use the wrapper below
  }
  return require.resolve("@foundry-rs/anvil/bin.mjs");
}

export class AnvilStartError extends Error {
  constructor(
    message: string,
    readonly pid: number | undefined,
  ) {
    super(message);
    this.name = "AnvilStartError";
  }
}

export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID;
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const binary = anvilBinary();
  const args = ["--port", "0", "--host", "127.0.0.1", "--chain-id", String(chainId)];
  const child = binary.endsWith(".mjs")
    ? spawn(process.execPath, [binary, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });

  // Last resort for a test process that exits without running its `after` hooks; an exit handler may only do sync work.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  void exited.then(() => process.off("exit", killOnExit));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    }
  };

  return new Promise<Anvil>((resolve, reject) => {
    let output = "";
    let settled = false;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      child.stdout?.off("data", onOutput);
      child.stderr?.off("data", onOutput);
      // Keep draining the pipes without a listener, or anvil blocks once its request log fills them.
      child.stdout?.resume();
      child.stderr?.resume();
    };
    const fail = (reason: string) => {
      if (settled) return;
      settle();
      const error = new AnvilStartError(
        `anvil did not start: ${reason}\n${binary} ${args.join(" ")}\n--- output ---\n${output}`,
        child.pid,
      );
      // Reject only once the process is gone, so a failed start leaves nothing behind either.
      void stop().then(() => reject(error));
    };
    const onOutput = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on ([\d.]+):(\d+)/.exec(output);
      if (!match || settled) return;
      settle();
      resolve({ rpcUrl: `http://${match[1]}:${match[2]}`, chainId, pid: child.pid ?? -1, stop });
    };
    const timer = setTimeout(() => fail(`no "Listening on" line within ${timeoutMs} ms`), timeoutMs);
    child.stdout?.on("data", onOutput);
    child.stderr?.on("data", onOutput);
    child.once("error", (error) => fail(error.message));
    child.once("exit", (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
  });
}
