// The embedded default's local chain through the real service process: npm start runs anvil with the stack deployed,
// npm run demo walks the sponsored flow against it (EntryPoint v0.6, v0.7, and EIP-7702 on v0.8, the later two checked
// on chain), a stop leaves no anvil behind, a restart (even after a SIGKILL) finds the chain as it was, and services on
// different data folders run side by side.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  type Hex,
  http,
  isAddressEqual,
  parseEther,
  parseEventLogs,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../src/bindings/entryPoints/entryPointV07";
import { verifyingPaymasterArtifact, verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import { LOCAL_VERIFYING_PAYMASTER_ADDRESS } from "../../src/devChain/deployments";
import {
  ANVIL_DEFAULT_KEYS,
  ANVIL_STATE_FILE,
  LOCAL_CHAIN_FILE,
  type LocalChainInfo,
  readLocalChainInfo,
} from "../../src/devChain/localChain";
import { embeddedEnv, type RunningService, runScript, startService } from "../helpers/service";

const folders: string[] = [];
const running: RunningService[] = [];
after(async () => {
  await Promise.all(running.map((service) => service.stop()));
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function dataFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-local-chain-"));
  folders.push(folder);
  return folder;
}

/** The local chain on, and the start log at info, whatever the run's own environment says. */
const localChainEnv = (dataDir: string) => embeddedEnv(dataDir, { LOCAL_CHAIN: "auto", LOG_LEVEL: "info" });

async function start(dataDir: string): Promise<RunningService> {
  const service = await startService(localChainEnv(dataDir));
  running.push(service);
  return service;
}

async function stop(service: RunningService): Promise<number | null> {
  running.splice(running.indexOf(service), 1);
  return service.stop();
}

/** Alive and not a zombie. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat[stat.lastIndexOf(")") + 2] !== "Z";
  } catch {
    return true;
  }
}

function chainOf(dataDir: string, service: RunningService): LocalChainInfo {
  const info = readLocalChainInfo(dataDir);
  assert.ok(info, `no local chain in ${dataDir}`);
  assert.equal(info.servicePid, service.process.pid);
  return info;
}

const fundingWallet = privateKeyToAccount(ANVIL_DEFAULT_KEYS.fundingWallet).address;
const paymaster = { address: LOCAL_VERIFYING_PAYMASTER_ADDRESS, abi: verifyingPaymasterArtifact.abi } as const;

function depositOf(rpcUrl: string, wallet: Address = fundingWallet): Promise<bigint> {
  return createPublicClient({ transport: http(rpcUrl) }).readContract({
    ...paymaster,
    functionName: "getBalance",
    args: [wallet],
  });
}

async function runDemo(dataDir: string) {
  const demo = await runScript("src/cli/demo.ts", [], localChainEnv(dataDir));
  assert.equal(demo.code, 0, `demo failed:\n${demo.stdout}\n${demo.stderr}`);
  assert.match(demo.stdout, /UserOperationEvent success: true/);
  assert.match(demo.stdout, /smart account 0x[0-9a-fA-F]{40} deployed: true/);
  // The operation paid in TUSDC with a permit: charged before its call, the rest refunded, no approve.
  assert.match(demo.stdout, /TokenCharged: charge [\d.]+ TUSDC, refund [\d.]+ TUSDC of the [\d.]+ TUSDC taken/);
  const deposits = /before the operation ([\d.]+) ETH, after ([\d.]+) ETH/.exec(demo.stdout);
  assert.ok(deposits, demo.stdout);
  const [before, afterOp] = [parseEther(deposits[1] as string), parseEther(deposits[2] as string)];
  assert.ok(afterOp < before, `the deposit drops: ${deposits[0]}`);
  return { stdout: demo.stdout, before, after: afterOp };
}

/**
 * The demo's v0.7 operation and its EIP-7702 one on v0.8, checked on chain from what it printed: the transaction holds
 * a successful UserOperationEvent of that version's EntryPoint for the printed userOpHash, paid by our paymaster, which
 * charged the dApp exactly what the demo says its deposit paid; the 7702 one went in a type-4 transaction and left the
 * EOA delegating to Simple7702Account.
 */
async function checkLaterOperations(stdout: string, chain: LocalChainInfo) {
  const client = createPublicClient({ transport: http(chain.rpcUrl) });
  for (const version of ["0.7", "0.8"] as const) {
    const stack = chain.entryPoints[version];
    const v = version.replace(".", "\\.");
    const printed = new RegExp(
      `EntryPoint v${v} (0x[0-9a-fA-F]{40}): .*\\n(?:.*\\n)*?\\d+\\. Signed by the owner \\(userOpHash (0x[0-9a-f]{64})\\).*\\n` +
        `\\s+transaction (0x[0-9a-f]{64}) \\(type (\\w+)\\): success.*\\n` +
        `\\s+UserOperationEvent success: true, EntryPoint v${v}, .*\\n` +
        `\\s+the dApp's deposit in the v${v} paymaster: .* \\(paid ([\\d.]+) ETH\\)`,
    ).exec(stdout);
    assert.ok(printed, `the demo's v${version} operation, as printed:\n${stdout}`);
    const [, entryPoint, userOpHash, txHash, txType, paid] = printed as unknown as string[];
    assert.ok(entryPoint && userOpHash && txHash && paid);
    assert.ok(isAddressEqual(entryPoint as Address, stack.entryPoint));
    const receipt = await client.getTransactionReceipt({ hash: txHash as Hex });
    assert.equal(receipt.status, "success");
    assert.equal(txType, receipt.type);
    const [event, ...others] = parseEventLogs({
      abi: entryPointV07Abi,
      eventName: "UserOperationEvent",
      logs: receipt.logs,
    });
    assert.ok(event && others.length === 0, `one UserOperationEvent in ${txHash}`);
    assert.ok(isAddressEqual(event.address, stack.entryPoint), `emitted by EntryPoint v${version}`);
    assert.equal(event.args.userOpHash, userOpHash);
    assert.equal(event.args.success, true);
    assert.ok(isAddressEqual(event.args.paymaster, stack.verifyingPaymaster), "our paymaster of the version paid");
    const [charged] = parseEventLogs({
      abi: verifyingPaymasterV07Artifact.abi,
      eventName: "GasCharged",
      logs: receipt.logs,
    });
    assert.ok(charged && charged.args.userOpHash === userOpHash, "our paymaster charged the operation");
    assert.ok(isAddressEqual(charged.args.paymasterId, fundingWallet), "to the dApp's funding wallet");
    assert.equal(charged.args.charge, parseEther(paid), "the deposit paid what the paymaster charged");
    const code = await client.getCode({ address: event.args.sender });
    if (version === "0.7") {
      assert.equal(txType, "eip1559");
      assert.ok(code && code !== "0x", "the first operation deployed the SimpleAccount");
    } else {
      assert.equal(txType, "eip7702", "handleOps carried the authorization in a type-4 transaction");
      assert.equal(code?.toLowerCase(), `0xef0100${stack.simple7702Account?.slice(2).toLowerCase()}`);
    }
  }
}

test("npm start runs the local chain, npm run demo mines sponsored v0.6, v0.7 and EIP-7702 operations, a stop ends anvil, a restart keeps the chain", async () => {
  const dataDir = dataFolder();
  const first = await start(dataDir);
  const chain = chainOf(dataDir, first);
  const startLine = new RegExp(`local development chain 31337 \\(anvil, not a real network\\) at ${chain.rpcUrl}`);
  assert.match(
    await first.outputMatching(startLine),
    new RegExp(`${startLine.source}: fresh chain.*paymaster ${LOCAL_VERIFYING_PAYMASTER_ADDRESS}`),
  );
  assert.ok(isRunning(chain.anvilPid));

  const demo = await runDemo(dataDir);
  const deposit = await depositOf(chain.rpcUrl);
  assert.equal(deposit, demo.after);
  await checkLaterOperations(demo.stdout, chain);

  assert.equal(await stop(first), 0, "SIGTERM stops the service cleanly");
  assert.equal(isRunning(chain.anvilPid), false, "no anvil is left behind");
  assert.equal(existsSync(path.join(dataDir, LOCAL_CHAIN_FILE)), false);
  assert.equal(existsSync(path.join(dataDir, ANVIL_STATE_FILE)), true);

  const second = await start(dataDir);
  const restarted = chainOf(dataDir, second);
  assert.notEqual(restarted.anvilPid, chain.anvilPid);
  await second.outputMatching(/state loaded from/);
  assert.equal(await depositOf(restarted.rpcUrl), deposit, "the chain's state survived the restart");
  // The second run starts from the first one's deposit.
  const again = await runDemo(dataDir);
  assert.equal(again.before, deposit + parseEther("1"));

  // Killed without a chance to stop its anvil: the next start on the folder takes the orphan's state over and ends it.
  second.process.kill("SIGKILL");
  running.splice(running.indexOf(second), 1);
  await new Promise((resolve) => second.process.once("exit", resolve));
  assert.ok(isRunning(restarted.anvilPid), "the orphan runs on");
  const funding = createWalletClient({
    account: privateKeyToAccount(ANVIL_DEFAULT_KEYS.fundingWallet),
    transport: http(restarted.rpcUrl),
  });
  const orphanDeposit = await depositOf(restarted.rpcUrl);
  const hash = await funding.writeContract({
    ...paymaster,
    chain: null,
    functionName: "depositFor",
    args: [fundingWallet],
    value: 1n,
  });
  await createPublicClient({ transport: http(restarted.rpcUrl), pollingInterval: 20 }).waitForTransactionReceipt({
    hash,
  });

  const third = await start(dataDir);
  const taken = chainOf(dataDir, third);
  assert.equal(isRunning(restarted.anvilPid), false, "the orphan was ended");
  assert.equal(await depositOf(taken.rpcUrl), orphanDeposit + 1n, "with what happened on it after the kill");
  await stop(third);
  assert.equal(isRunning(taken.anvilPid), false);
});

test("services on two data folders run their own local chains side by side", async () => {
  const [one, two] = [dataFolder(), dataFolder()];
  const [first, second] = await Promise.all([start(one), start(two)]);
  const [a, b] = [chainOf(one, first), chainOf(two, second)];
  assert.notEqual(a.rpcUrl, b.rpcUrl);
  assert.notEqual(a.anvilPid, b.anvilPid);
  const [demoA, demoB] = await Promise.all([runDemo(one), runDemo(two)]);
  // Each chain holds its own demo's deposit only.
  assert.equal(await depositOf(a.rpcUrl), demoA.after);
  assert.equal(await depositOf(b.rpcUrl), demoB.after);
  await Promise.all([stop(first), stop(second)]);
  assert.equal(isRunning(a.anvilPid), false);
  assert.equal(isRunning(b.anvilPid), false);
});

test("the demo says what is missing: no service, or a service without the local chain", async () => {
  const dataDir = dataFolder();
  const none = await runScript("src/cli/demo.ts", [], localChainEnv(dataDir));
  assert.equal(none.code, 1);
  assert.match(none.stderr, /no service is running on the data folder .*: start it with npm start first/);

  const off = await startService(embeddedEnv(dataDir, { LOCAL_CHAIN: "off" }));
  running.push(off);
  assert.equal(readLocalChainInfo(dataDir), undefined);
  const withoutChain = await runScript("src/cli/demo.ts", [], localChainEnv(dataDir));
  assert.equal(withoutChain.code, 1);
  assert.match(withoutChain.stderr, /runs without a local chain/);
  await stop(off);
});
