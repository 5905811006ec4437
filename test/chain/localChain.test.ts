// The local chain's start in-process: when it is wanted, what it deploys, and how a start fails (bounded, clear, with no
// anvil left behind). The service around it is tested in test/service/localChain.test.ts.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { createPublicClient, http, parseAbi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";
import { type ChainConfig, ConfigError, loadConfig } from "../../src/config";
import { ACCOUNT_FAMILIES } from "../../src/devChain/accountFamilies";
import {
  ANVIL_STATE_FILE,
  LOCAL_CHAIN_FILE,
  LocalChainError,
  readLocalChainInfo,
  startLocalChain,
  wantsLocalChain,
  withLocalChain,
} from "../../src/devChain/localChain";
import {
  LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT,
  LOCAL_TOKEN_PAYMASTER_V07_STAKE,
} from "../../src/devChain/localTokenPaymastersV07";
import { isAlive } from "../../src/storage/processIdentity";

const depositInfoAbi = parseAbi([
  "struct DepositInfo { uint256 deposit; bool staked; uint112 stake; uint32 unstakeDelaySec; uint48 withdrawTime; }",
  "function getDepositInfo(address account) view returns (DepositInfo info)",
]);

const folders: string[] = [];
after(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});
function dataFolder(): string {
  const folder = mkdtempSync(path.join(tmpdir(), "paymaster-local-chain-"));
  folders.push(folder);
  return folder;
}

/** Live processes whose command line names the folder (Linux; elsewhere none are seen). */
function processesOf(dataDir: string): number[] {
  if (!existsSync("/proc/self")) return [];
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dataDir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

test("LOCAL_CHAIN: auto by default, off with DATABASE_URL, nothing else accepted", () => {
  assert.equal(loadConfig({}).localChain, "auto");
  assert.equal(loadConfig({ DATABASE_URL: "postgres://u@h/db" }).localChain, "off");
  assert.equal(loadConfig({ DATABASE_URL: "postgres://u@h/db", LOCAL_CHAIN: "auto" }).localChain, "auto");
  assert.equal(loadConfig({ LOCAL_CHAIN: "off" }).localChain, "off");
  assert.throws(() => loadConfig({ LOCAL_CHAIN: "on" }), ConfigError);
});

test("the local chain is wanted only for 31337 listed without an rpcUrl, and only with LOCAL_CHAIN=auto", () => {
  const chains = (local?: Partial<ChainConfig>) =>
    new Map<number, ChainConfig>([
      ...(local ? [[31337, { chainId: 31337, name: "local", ...local }] as const] : []),
      [84532, { chainId: 84532, name: "Base Sepolia" }],
    ]);
  assert.equal(wantsLocalChain({ localChain: "auto", chains: chains({}) }), true);
  assert.equal(wantsLocalChain({ localChain: "off", chains: chains({}) }), false);
  assert.equal(wantsLocalChain({ localChain: "auto", chains: chains({ rpcUrl: "http://127.0.0.1:8545" }) }), false);
  assert.equal(wantsLocalChain({ localChain: "auto", chains: chains() }), false);
  // The default chains file lists 31337 without one.
  assert.equal(wantsLocalChain(loadConfig({})), true);

  const resolved = withLocalChain(chains({}), { rpcUrl: "http://127.0.0.1:1234" });
  assert.equal(resolved.get(31337)?.rpcUrl, "http://127.0.0.1:1234");
  assert.equal(resolved.get(84532)?.rpcUrl, undefined);
});

test("a start deploys the stack with the service's signer, and a second start on the folder changes nothing", async () => {
  const dataDir = dataFolder();
  const signer = privateKeyToAccount(generatePrivateKey()).address;
  const first = await startLocalChain({ dataDir, signer });
  try {
    assert.deepEqual(first.deployed, [
      "entryPoint",
      "simpleAccountFactory",
      "verifyingPaymaster",
      "entryPoint v0.7",
      "simpleAccountFactory v0.7",
      "verifyingPaymaster v0.7",
      "tokenPaymaster v0.7",
      "permitTokenPaymaster v0.7",
      "entryPoint v0.8",
      "simpleAccountFactory v0.8",
      "simple7702Account v0.8",
      "verifyingPaymaster v0.8",
      "tokenPaymaster v0.8",
      "permitTokenPaymaster v0.8",
      "entryPoint v0.9",
      "simpleAccountFactory v0.9",
      "simple7702Account v0.9",
      "verifyingPaymaster v0.9",
      "tokenPaymaster v0.9",
      "permitTokenPaymaster v0.9",
      // The smart accounts' families, after the factories they are deployed through.
      "safeSingletonFactory",
      "biconomyCreate3Factory",
      ...ACCOUNT_FAMILIES.flatMap((family) => family.data.deployments.map(({ name }) => name)),
    ]);
    assert.equal(first.signerAdded, true);
    assert.equal(first.restored, false);
    assert.deepEqual(readLocalChainInfo(dataDir), first.info);
    const client = createPublicClient({ transport: http(first.rpcUrl) });
    // Every version's paymaster accepts the service's key, and each is built against its own EntryPoint.
    const paymasters = [
      [first.info.verifyingPaymaster, first.info.entryPoint],
      ...(["0.7", "0.8", "0.9"] as const).flatMap((version) => {
        const { verifyingPaymaster, tokenPaymaster, permitTokenPaymaster, entryPoint } =
          first.info.entryPoints[version];
        return [
          [verifyingPaymaster, entryPoint],
          [tokenPaymaster, entryPoint],
          [permitTokenPaymaster, entryPoint],
        ] as const;
      }),
    ];
    for (const [address, entryPoint] of paymasters) {
      const contract = { address, abi: verifyingPaymasterV07Artifact.abi } as const;
      assert.deepEqual(
        [
          await client.readContract({ ...contract, functionName: "isSigner", args: [signer] }),
          await client.readContract({ ...contract, functionName: "signerCount" }),
          await client.readContract({ ...contract, functionName: "entryPoint" }),
        ],
        [true, 1n, entryPoint],
        address,
      );
    }
    // Each later version's token paymasters pay from their own EntryPoint deposits and are staked, as a paymaster
    // that returns a context must be (ERC-7562).
    for (const [version, kind] of (["0.7", "0.8", "0.9"] as const).flatMap((version) =>
      (["tokenPaymaster", "permitTokenPaymaster"] as const).map((kind) => [version, kind] as const),
    )) {
      const { entryPoint } = first.info.entryPoints[version];
      const info = await client.readContract({
        address: entryPoint,
        abi: depositInfoAbi,
        functionName: "getDepositInfo",
        args: [first.info.entryPoints[version][kind]],
      });
      assert.deepEqual(
        [info.deposit, info.staked, info.stake, info.unstakeDelaySec],
        [
          LOCAL_TOKEN_PAYMASTER_V07_DEPOSIT,
          true,
          LOCAL_TOKEN_PAYMASTER_V07_STAKE.amount,
          LOCAL_TOKEN_PAYMASTER_V07_STAKE.unstakeDelaySec,
        ],
        `${kind} v${version}`,
      );
    }
    // anvil runs Prague as asked, not whatever its "latest" is.
    const response = await fetch(first.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_nodeInfo", params: [] }),
    });
    const { result } = (await response.json()) as { result: { hardFork: string } };
    assert.equal(result.hardFork, "Prague");
  } finally {
    await first.stop();
  }
  assert.equal(isAlive(first.info.anvilPid), false);
  assert.equal(readLocalChainInfo(dataDir), undefined);

  const stateFile = path.join(dataDir, ANVIL_STATE_FILE);
  const savedAtStop = statSync(stateFile).mtimeMs;
  const second = await startLocalChain({ dataDir, signer });
  // Nothing was mined on the restart, so the state on disk is already the chain's: the start does not write it again.
  assert.equal(statSync(stateFile).mtimeMs, savedAtStop);
  await second.stop();
  assert.deepEqual([second.restored, second.deployed, second.signerAdded], [true, [], false]);
  // Saves replace the file whole: no temporary file is left.
  assert.deepEqual(readdirSync(dataDir).sort(), ["anvil-config.json", ANVIL_STATE_FILE]);
});

test("a start that runs out of time fails with a clear error and leaves no anvil", async () => {
  const dataDir = dataFolder();
  const error = await startLocalChain({
    dataDir,
    signer: privateKeyToAccount(generatePrivateKey()).address,
    startTimeoutMs: 1,
  }).then(
    () => assert.fail("nothing starts in 1 ms"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof LocalChainError);
  assert.match(error.message, /^the local chain \(anvil\) did not start \(set LOCAL_CHAIN=off .*within 1 ms/);
  assert.deepEqual(processesOf(dataDir), []);
  assert.equal(existsSync(path.join(dataDir, LOCAL_CHAIN_FILE)), false);
});

test("a damaged state file stops the start with a hint instead of starting a chain the database does not know", async () => {
  const dataDir = dataFolder();
  writeFileSync(path.join(dataDir, ANVIL_STATE_FILE), '{"block":');
  const error = await startLocalChain({ dataDir, signer: privateKeyToAccount(generatePrivateKey()).address }).then(
    () => assert.fail("a damaged state must not load"),
    (e: unknown) => e,
  );
  assert.ok(error instanceof LocalChainError);
  assert.match(error.message, /is damaged, move it away to start a fresh chain/);
  assert.deepEqual(processesOf(dataDir), []);
});
