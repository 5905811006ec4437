// Benchmark: sponsorship requests over real HTTP against an empty Fastify handler measured in the same run.
// Both servers run in child processes; this process is the load generator. Usage: npm run bench [-- --seconds 10]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { encodeFunctionData, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { openDatabase } from "../src/storage/database";
import { pgliteFolder } from "../src/storage/dataFolder";
import { embeddedEnv, startService } from "../test/helpers/service";
import { type LoadResult, load } from "./load";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "50" } },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const ROOT = path.resolve(import.meta.dirname, "..");
const TARGET = "0x1111111111111111111111111111111111111111";
const targetAbi = parseAbi(["function mint(uint256 amount)"]);
const accountAbi = parseAbi(["function execute_ncC(address dest, uint256 value, bytes func)"]);

const rpcBody = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "pm_sponsorUserOperation",
  params: [
    {
      sender: "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4",
      nonce: "0x8",
      initCode: "0x",
      callData: encodeFunctionData({
        abi: accountAbi,
        functionName: "execute_ncC",
        args: [TARGET, 0n, encodeFunctionData({ abi: targetAbi, functionName: "mint", args: [1n] })],
      }),
      callGasLimit: "0x1a930",
      verificationGasLimit: "0xdf21",
      preVerificationGas: "0x1267c",
      maxFeePerGas: "0xc02244",
      maxPriorityFeePerGas: "0xf4240",
      signature: "0x",
    },
    { mode: "SPONSORED", calculateGasLimits: false, expiryDuration: 300 },
  ],
});

async function measure(url: string): Promise<LoadResult> {
  await load(url, rpcBody, { connections, seconds: 2 }); // warm-up: JIT, connection pools, caches
  return load(url, rpcBody, { connections, seconds });
}

async function baseline(): Promise<LoadResult> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/emptyServer.ts"], { cwd: ROOT, stdio: "pipe" });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      const match = /PORT (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", (code) => reject(new Error(`empty server exited with ${code}`)));
  });
  try {
    return await measure(`http://127.0.0.1:${port}/api/v1/31337/key`);
  } finally {
    child.kill("SIGTERM");
  }
}

async function api(base: string, method: string, route: string, headers: Record<string, string>, body?: unknown) {
  const response = await fetch(`${base}/api/v2/public/sdk/${route}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json()) as { data?: Record<string, string> };
  if (!response.ok) throw new Error(`${method} ${route}: ${JSON.stringify(json)}`);
  return json.data ?? {};
}

async function service(): Promise<{ result: LoadResult; recorded: number }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "paymaster-bench-"));
  const running = await startService(embeddedEnv(dataDir));
  let result: LoadResult;
  try {
    const authToken = running.output().trim().split("\n").at(-1) as string;
    const base = running.baseUrl;
    const dapp = await api(
      base,
      "POST",
      "paymasterParameters",
      { authToken },
      {
        name: "bench",
        type: "HYBRID",
        chainId: 31337,
        version: "1.0.0",
      },
    );
    const headers = { authToken, apiKey: dapp.apiKey as string };
    const { fundingMessage } = await api(base, "GET", `funding-message/${dapp.paymasterId}`, headers);
    const wallet = privateKeyToAccount(generatePrivateKey());
    await api(base, "PATCH", "paymasterParameters", headers, {
      paymasterId: dapp.paymasterId,
      type: "paymasterFundingId",
      signature: await wallet.signMessage({ message: fundingMessage as string }),
      address: wallet.address,
    });
    await api(base, "POST", "smart-contract", headers, {
      name: "target",
      address: TARGET,
      abi: JSON.stringify(targetAbi),
      whitelistedMethods: ["mint"],
    });
    const url = `${base}/api/v1/31337/${dapp.apiKey}`;
    const check = (await (
      await fetch(url, { method: "POST", body: rpcBody, headers: { "content-type": "application/json" } })
    ).json()) as {
      result?: { paymasterAndData: string };
    };
    if (check.result?.paymasterAndData.length !== 2 + 276 * 2)
      throw new Error(`not sponsored: ${JSON.stringify(check)}`);
    result = await measure(url);
  } finally {
    await running.stop();
  }
  const db = await openDatabase({ dataDir: pgliteFolder(dataDir) });
  const [row] = await db.query<{ count: string | number }>(
    "SELECT count(*) AS count FROM sponsorships WHERE sponsored",
  );
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
  return { result, recorded: Number(row?.count ?? 0) };
}

const empty = await baseline();
const { result: ours, recorded } = await service();
const ratio = ours.requestsPerSecond / empty.requestsPerSecond;
console.table({
  "empty Fastify handler": empty,
  "pm_sponsorUserOperation (PGlite, whitelist rule)": ours,
});
console.log(`throughput ratio ${ratio.toFixed(2)} (target ≥ 0.50); p99 ${ours.p99Ms} ms (target < 25 ms)`);
console.log(`sponsorships recorded: ${recorded} (every 2xx answer of the run, warm-up and check included)`);
console.log(ratio >= 0.5 && ours.p99Ms < 25 && ours.non2xx === 0 ? "TARGETS MET" : "TARGETS MISSED");
