// The Alto bundler (@pimlico/alto) as a child process against a local anvil, for end-to-end tests through a real
// bundler. One per test file, on a free port; `stop()` always ends it, and so does the test process's exit.
//
//   const alto = await startAlto({ rpcUrl: anvil.rpcUrl, executorKey, utilityKey });
//   after(() => alto.stop());
//
// Alto serves two API versions: `${url}/v1/rpc` and `${url}/v2/rpc`, and `url` itself answers with the default one.
// v2 is what Pimlico's hosted bundlers serve: it also refuses at eth_sendUserOperation an operation whose
// preVerificationGas or fees are below its own rules; v1 checks neither.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import path from "node:path";
import type { Address, Hex } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";

export interface Alto {
  url: string;
  pid: number;
  /** What Alto printed, for a failing test's message. */
  output(): string;
  /** Ends the process and resolves once it has exited; safe to call twice. */
  stop(): Promise<void>;
}

export type ApiVersion = "v1" | "v2";

export interface AltoOptions {
  rpcUrl: string;
  /** Sends the bundles; needs ether on the chain. */
  executorKey: Hex;
  /** Alto's utility account (refills executors); another funded key. */
  utilityKey: Hex;
  /**
   * The API versions Alto serves (its `--api-version`), the first one also at `url` (`--default-api-version`).
   * Default: both, v1 at `url`, as Alto does by itself.
   */
  apiVersions?: readonly ApiVersion[];
  /** Default 120 s: a bound against a hang, not a speed target; on a loaded 2-core machine Alto's start has taken more than 30 s. */
  startTimeoutMs?: number;
  /** The EntryPoints Alto bundles for (its `--entrypoints`). Default: v0.6 alone. */
  entryPoints?: readonly Address[];
  /**
   * Alto's `--chain-type`: "op-stack" and "arbitrum" add the chain's L1 data cost to the preVerificationGas it asks for
   * (test/helpers/l2Chains.ts starts such chains). Default: Alto's own, "default", which adds none.
   */
  chainType?: "default" | "op-stack" | "arbitrum";
}

const STOP_GRACE_MS = 3_000;
const OUTPUT_LIMIT = 64 * 1024;

/** Alto's command-line entry, run with this Node: no wrapper process in between, so killing it kills Alto. */
function altoCli(): string {
  const main = createRequire(import.meta.url).resolve("@pimlico/alto");
  return path.join(path.dirname(main), "cli", "alto.js");
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address !== "object") throw new Error("no free port");
  return address.port;
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      signal: AbortSignal.timeout(1_000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

export async function startAlto(options: AltoOptions): Promise<Alto> {
  const port = await freePort();
  const versions = options.apiVersions ?? ["v1", "v2"];
  if (versions.length === 0) throw new Error("startAlto: apiVersions must name at least one version");
  const args = [
    altoCli(),
    "--entrypoints",
    (options.entryPoints ?? [ENTRY_POINT_V06_ADDRESS]).join(","),
    "--rpc-url",
    options.rpcUrl,
    "--executor-private-keys",
    options.executorKey,
    "--utility-private-key",
    options.utilityKey,
    // Unsafe mode: no ERC-7562 storage rules, so our paymaster needs no stake on a local chain.
    "--safe-mode",
    "false",
    "--port",
    String(port),
    // anvil mines at once: poll its blocks often instead of once a second.
    "--block-time",
    "200",
    "--log-level",
    "warn",
    "--api-version",
    versions.join(","),
    "--default-api-version",
    versions[0] as ApiVersion,
    ...(options.chainType ? ["--chain-type", options.chainType] : []),
  ];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    if (output.length < OUTPUT_LIMIT) output += chunk.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);

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

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.startTimeoutMs ?? 120_000);
  while (!(await answers(url))) {
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`Alto did not start (exit ${child.exitCode}, signal ${child.signalCode}):\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, pid: child.pid ?? -1, output: () => output, stop };
}
