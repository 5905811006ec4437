// anvil (from the npm package @foundry-rs/anvil) as a child process on a port the OS picks, so that several can run on
// one machine. The embedded service's local chain (localChain.ts) and the tests' chains both start it here.
//
//   const anvil = await startAnvil();
//   after(() => anvil.stop());
import { type SpawnOptionsWithStdioTuple, type StdioNull, type StdioPipe, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";

export interface Anvil {
  rpcUrl: string;
  chainId: number;
  pid: number;
  /** Everything anvil printed before it reported its port (its banner), for a message. */
  banner: string;
  /** Ends the process and resolves once it has exited; safe to call twice. */
  stop(): Promise<void>;
}

export interface AnvilOptions {
  chainId?: number;
  /** How long anvil may take to report its port before the start fails. */
  startTimeoutMs?: number;
  /** More command-line arguments, e.g. `--load-state <file>`. */
  args?: string[];
  /**
   * Its own process group: a Ctrl-C in the terminal then reaches only us, and we stop anvil when we are ready
   * (the service saves the chain's state first). Tests leave it in theirs, so a Ctrl-C ends their chains too.
   */
  detached?: boolean;
}

const DEFAULT_CHAIN_ID = 31337;
const DEFAULT_START_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 2_000;

export class AnvilStartError extends Error {
  constructor(
    message: string,
    readonly pid: number | undefined,
  ) {
    super(message);
    this.name = "AnvilStartError";
  }
}

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
  try {
    return require.resolve("@foundry-rs/anvil/bin.mjs");
  } catch {
    throw new AnvilStartError(
      "anvil is not installed: the npm package @foundry-rs/anvil is missing (it is a dev dependency: run npm install " +
        "without --omit=dev)",
      undefined,
    );
  }
}

export function startAnvil(options: AnvilOptions = {}): Promise<Anvil> {
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID;
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  let binary: string;
  try {
    binary = anvilBinary();
  } catch (error) {
    return Promise.reject(error);
  }
  const args = ["--port", "0", "--host", "127.0.0.1", "--chain-id", String(chainId), ...(options.args ?? [])];
  const spawnOptions: SpawnOptionsWithStdioTuple<StdioNull, StdioPipe, StdioPipe> = {
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false,
  };
  const child = binary.endsWith(".mjs")
    ? spawn(process.execPath, [binary, ...args], spawnOptions)
    : spawn(binary, args, spawnOptions);

  // Last resort for a process that exits without stopping anvil; an exit handler may only do sync work.
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
      resolve({ rpcUrl: `http://${match[1]}:${match[2]}`, chainId, pid: child.pid ?? -1, banner: output, stop });
    };
    const timer = setTimeout(() => fail(`no "Listening on" line within ${timeoutMs} ms`), timeoutMs);
    child.stdout?.on("data", onOutput);
    child.stderr?.on("data", onOutput);
    child.once("error", (error) => fail(error.message));
    child.once("exit", (code, signal) => fail(`exited early (code ${code}, signal ${signal})`));
  });
}
