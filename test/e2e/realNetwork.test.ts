// Going live on a chain that is not ours, played on anvil with another chain id (84532, Base Sepolia's): the chain
// holds only what public chains hold (the CREATE2 proxy, which anvil predeploys, and the canonical EntryPoints v0.6,
// v0.7 and v0.8 with their SimpleAccount factories, deployed through that proxy with the salts they have on public
// chains), plus the fee token and price feed an operator would find there. The contracts command, run as a child
// process as an operator runs it, deploys our paymasters, stakes and funds them and checks them; a second deploy sends
// nothing; the service, on a chains file that names only that chain, sponsors an operation of each version and an
// ERC20 one, mined through Alto; a rotation with `signers add` and `signers remove` loses no operation signed before
// it; and once the service's key is out of the set, `status` says so.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  http,
  isAddressEqual,
  parseEther,
} from "viem";
import {
  createBundlerClient,
  createPaymasterClient,
  formatUserOperationRequest,
  type SmartAccount,
  type UserOperation,
} from "viem/account-abstraction";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import type { KnownEntryPointVersion } from "../../src/bindings/entryPoints/versions";
import { OUR_PAYMASTERS, paymasterInitCode } from "../../src/bindings/paymasters/ourPaymasters";
import { fixedPriceAggregatorArtifact, testTokenArtifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/verifyingArtifacts";
import { create2Address } from "../../src/chain/create2";
import { readChains } from "../../src/config";
import { entryPointDeployment, simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { entryPointStack } from "../../src/devChain/entryPointV07Deployments";
import { deployCreate2Batch } from "../../src/devChain/localBatch";
import { simpleAccountAbi } from "../../src/devChain/simpleAccount";
import { createSigner } from "../../src/signer/signer";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";
import { type Alto, startAlto } from "../helpers/alto";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { TARGET } from "../helpers/chainApp";
import { fundedDapp, rpc } from "../helpers/dappSetup";
import { embeddedEnv } from "../helpers/service";
import { ESTIMATED_GAS, userOpV06 } from "../helpers/userOps";

const CHAIN_ID = 84532;
const CHECK_INTERVAL_MS = 200;
const ROOT = path.resolve(import.meta.dirname, "../..");
const VERSIONS = ["0.6", "0.7", "0.8"] as const satisfies readonly KnownEntryPointVersion[];
const ENTRY_POINTS: Record<(typeof VERSIONS)[number], Address> = {
  "0.6": ENTRY_POINT_V06_ADDRESS,
  "0.7": ENTRY_POINT_V07_ADDRESS,
  "0.8": ENTRY_POINT_V08_ADDRESS,
};
const owner = privateKeyToAccount(anvilKeys.owner).address;
const fundingKey = anvilKeys.fundingWallet;

let chain: LocalChain;
let alto: Alto;
let folder: string;
let token: Address;
let aggregator: Address;
const oldKey = generatePrivateKey();
const newKey = generatePrivateKey();
const files = { ownerKey: "", oldSignerKey: "", chains: "" };
/** Reports a going-live step's wall time and the gas of what it sent (the figures of docs/networks.md). */
function measured(tc: { diagnostic(message: string): void }, ...lines: string[]): void {
  for (const line of lines) tc.diagnostic(line);
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The contracts command as an operator runs it, on the service's configuration (the old signer key by default), for the
 * versions this chain carries: v0.9 is played end to end on the local chain (test/e2e/entryPointV09.test.ts), and an
 * operator names the versions a chain has, as here.
 */
async function contracts(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const started = performance.now();
  const versions = args.includes("--entry-points") ? [] : ["--entry-points", VERSIONS.join(",")];
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/contracts.ts", ...args, ...versions, "--rpc-url", chain.anvil.rpcUrl],
    {
      cwd: ROOT,
      env: embeddedEnv(folder, { CHAINS_FILE: files.chains, SIGNER_KEY_FILE: files.oldSignerKey, ...env }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => (stdout += chunk));
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stdout, stderr, ms: performance.now() - started };
}

function ok(run: Run, what: string): Run {
  assert.equal(run.code, 0, `${what} failed:\n${run.stdout}\n${run.stderr}`);
  return run;
}

/** "gas used N" of every mined line, by what was sent. */
function gasLines(run: Run): string[] {
  const lines = `${run.stdout}\n${run.stderr}`.split("\n");
  const out: string[] = [];
  for (const [index, line] of lines.entries()) {
    const gas = /mined in block \d+: success, gas used (\d+)/.exec(line);
    const sent = /^sent: (.*): 0x[0-9a-f]{64}$/.exec(lines[index - 1] ?? "");
    if (gas && sent) out.push(`${sent[1]}: ${gas[1]} gas`);
  }
  return out;
}

function writeKey(name: string, key: Hex): string {
  const file = path.join(folder, name);
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return file;
}

function writeChains(entry: Record<string, unknown>): void {
  writeFileSync(files.chains, JSON.stringify([entry], null, 2));
}

const tokens = () => [
  { address: token.toLowerCase(), symbol: "TUSD", decimals: 6, price: { aggregator: aggregator.toLowerCase() } },
];

before(async () => {
  folder = mkdtempSync(path.join(tmpdir(), "paymaster-real-network-"));
  chain = await startLocalChain({ chainId: CHAIN_ID, args: ["--hardfork", "prague"] });
  const clients = chain.clients(anvilKeys.stranger);
  // What public chains carry, deployed the way it was deployed there: through the CREATE2 proxy.
  const [v07, v08] = [entryPointStack("0.7"), entryPointStack("0.8")];
  const deployed = await deployCreate2Batch(clients, {
    entryPointV06: entryPointDeployment,
    factoryV06: simpleAccountFactoryDeployment,
    entryPointV07: v07.entryPoint,
    factoryV07: v07.simpleAccountFactory,
    entryPointV08: v08.entryPoint,
    factoryV08: v08.simpleAccountFactory,
  });
  assert.deepEqual(
    [deployed.entryPointV06.address, deployed.entryPointV07.address, deployed.entryPointV08.address].map((a) =>
      getAddress(a),
    ),
    [ENTRY_POINT_V06_ADDRESS, ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS],
  );
  // The fee token and its feed, as an operator finds USDC and a Chainlink feed on a public chain.
  const deployer = chain.wallet(anvilKeys.stranger);
  const deployContract = async (hash: Promise<Hex>) => {
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: await hash });
    return getAddress(receipt.contractAddress as Address);
  };
  token = await deployContract(deployer.deployContract({ ...testTokenArtifact, args: ["Test USD", "TUSD", 6] }));
  aggregator = await deployContract(
    deployer.deployContract({
      ...fixedPriceAggregatorArtifact,
      args: [deployer.account.address, 8, "ETH / TUSD", 3_000n * 10n ** 8n],
    }),
  );
  files.ownerKey = writeKey("owner.key", anvilKeys.owner);
  files.oldSignerKey = writeKey("signer.key", oldKey);
  files.chains = path.join(folder, "chains.json");
  // Before the deployment the chains file knows the chain by name only (fee tokens need a token paymaster).
  writeChains({ chainId: CHAIN_ID, name: "Base Sepolia (anvil)" });
  alto = await startAlto({
    rpcUrl: chain.anvil.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.otherFundingWallet,
    apiVersions: ["v2"],
    entryPoints: Object.values(ENTRY_POINTS),
    // Two cores shared by several test files: Alto's start alone has taken half a minute.
    startTimeoutMs: 120_000,
  });
});

after(async () => {
  try {
    await t?.close();
    await alto?.stop();
  } finally {
    await chain?.anvil.stop();
    rmSync(folder, { recursive: true, force: true });
  }
});

let entry: Record<string, unknown>;

test("the contracts command deploys, stakes, funds and checks our paymasters; a second deploy sends nothing", async (tc) => {
  const before = await contracts(["status", "--owner", owner, "--kinds", "verifying,token"]);
  assert.equal(before.code, 1, `status fails before anything is deployed:\n${before.stdout}\n${before.stderr}`);
  assert.match(before.stdout, /FAIL code \(v0\.7 verifying 0x[0-9a-fA-F]{40}\): no contract/);
  assert.match(before.stdout, /what to do: deploy it with `contracts deploy`/);

  const deploy = ok(
    await contracts(["deploy", "--owner", owner, "--key-file", files.ownerKey, "--kinds", "verifying,token", "--json"]),
    "deploy",
  );
  measured(tc, `deploy (6 paymasters + 6 addSigner): ${deploy.ms.toFixed(0)} ms`, ...gasLines(deploy));
  entry = JSON.parse(deploy.stdout) as Record<string, unknown>;
  const expected = (version: (typeof VERSIONS)[number], kind: "verifying" | "token") =>
    create2Address(paymasterInitCode(OUR_PAYMASTERS[version].paymasters[kind], ENTRY_POINTS[version], owner));
  assert.deepEqual(entry, {
    chainId: CHAIN_ID,
    name: "Base Sepolia (anvil)",
    verifyingPaymaster: expected("0.6", "verifying"),
    tokenPaymaster: expected("0.6", "token"),
    entryPoints: Object.fromEntries(
      (["0.7", "0.8"] as const).map((version) => [
        version,
        {
          entryPoint: ENTRY_POINTS[version],
          verifyingPaymaster: expected(version, "verifying"),
          tokenPaymaster: expected(version, "token"),
        },
      ]),
    ),
  });
  // Every transaction's hash and status were printed (on stderr with --json): six deployments, six additions.
  assert.equal(deploy.stderr.match(/^sent: .*: 0x[0-9a-f]{64}$/gm)?.length, 12, deploy.stderr);
  assert.equal(deploy.stderr.match(/mined in block \d+: success/g)?.length, 12);

  const stake = ok(
    await contracts(["stake", "--key-file", files.ownerKey, "--amount", "1", "--unstake-delay", "86400"]),
    "stake",
  );
  measured(tc, `stake (6 paymasters): ${stake.ms.toFixed(0)} ms`, ...gasLines(stake).slice(0, 2));
  assert.equal(stake.stdout.match(/^sent: staking /gm)?.length, 6);
  const fund = ok(await contracts(["deposit", "--key-file", files.ownerKey, "--amount", "2"]), "deposit");
  measured(tc, `deposit (3 token paymasters): ${fund.ms.toFixed(0)} ms`, ...gasLines(fund).slice(0, 1));
  assert.equal(fund.stdout.match(/^sent: adding 2 to the EntryPoint deposit of token paymaster/gm)?.length, 3);

  // The operator pastes the entry into the chains file with the node and the bundler. This anvil plays Base Sepolia
  // without its L1 data fee (no GasPriceOracle): the chain id's model (op-stack) would read an oracle that is not there.
  writeChains({ ...entry, rpcUrl: chain.anvil.rpcUrl, bundlerUrl: alto.url, tokens: tokens(), l1DataFee: "none" });
  const status = await contracts(["status", "--json"]);
  measured(tc, `status: ${status.ms.toFixed(0)} ms`);
  const report = JSON.parse(status.stdout) as { ok: boolean; checks: { ok: boolean; check: string }[] };
  assert.equal(status.code, 0, status.stdout);
  assert.equal(report.ok, true);
  // 1 chain id + 3 EntryPoints + 6 paymasters × 5 checks + 3 token paymasters × 1 fee token.
  assert.equal(report.checks.length, 1 + 3 + 30 + 3);

  const blockBefore = await chain.publicClient.getBlockNumber();
  const again = ok(
    await contracts(["deploy", "--owner", owner, "--key-file", files.ownerKey, "--kinds", "verifying,token"]),
    "second deploy",
  );
  assert.equal(await chain.publicClient.getBlockNumber(), blockBefore, "the second deploy sent nothing");
  assert.match(again.stdout, /nothing to send/);
  assert.deepEqual(JSON.parse(again.stdout.trim().split("\n").at(-1) as string), entry, "the last line is the entry");
  assert.equal(again.stdout.match(/^already deployed: /gm)?.length, 6);
});

let t: TestApp;
let dapp: Dapp;
let erc20Dapp: Dapp;

/** The service on the chains file as the operator wrote it: that chain alone. */
async function service(signerKey: Hex, db?: TestApp["db"]): Promise<TestApp> {
  const chains = readChains(files.chains);
  assert.deepEqual([...chains.keys()], [CHAIN_ID]);
  // The service's own checks of its contracts, every 200 ms here (30 s by default), for /readyz and the refusals.
  return startTestApp({
    signer: createSigner(signerKey),
    chains,
    contractChecks: { intervalMs: CHECK_INTERVAL_MS },
    ...(db ? { db } : {}),
  });
}

/** Where each app listens, once it does. */
const listening = new WeakMap<TestApp, string>();

async function endpointOf(app: TestApp, of: Dapp): Promise<string> {
  let base = listening.get(app);
  if (base === undefined) {
    base = await app.app.listen({ port: 0, host: "127.0.0.1" });
    listening.set(app, base);
  }
  return `${base}/api/v1/${CHAIN_ID}/${of.apiKey}`;
}

function paymasterOf(version: (typeof VERSIONS)[number], kind: "verifying" | "token" = "verifying"): Address {
  const field = kind === "verifying" ? "verifyingPaymaster" : "tokenPaymaster";
  if (version === "0.6") return entry[field] as Address;
  return (entry.entryPoints as Record<string, Record<string, Address>>)[version]?.[field] as Address;
}

async function newAccount(version: (typeof VERSIONS)[number]): Promise<SmartAccount> {
  return toSimpleSmartAccount({
    client: chain.publicClient,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: ENTRY_POINTS[version], version },
  });
}

function bundlerFor(account: SmartAccount, endpoint: string) {
  return createBundlerClient({
    account,
    client: chain.publicClient,
    transport: http(alto.url),
    paymaster: createPaymasterClient({ transport: http(endpoint) }),
    pollingInterval: 50,
  });
}

test("the service on that chains file alone sponsors an operation of each version and an ERC20 one, mined by Alto", async (tc) => {
  assert.ok(entry, "the deploy test ran");
  t = await service(oldKey);
  dapp = await fundedDapp(t, {
    fundingKey,
    walletDeployment: true,
    contract: { address: TARGET },
    dapp: { chainId: CHAIN_ID },
  });
  for (const version of VERSIONS) {
    const hash = await chain.wallet(fundingKey).writeContract({
      address: paymasterOf(version),
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "depositFor",
      args: [privateKeyToAccount(fundingKey).address],
      value: parseEther("1"),
    });
    await chain.publicClient.waitForTransactionReceipt({ hash });
  }
  const ready = await readyChain(t);
  assert.deepEqual(ready.chain.contracts.failed, [], "every contract check holds at start");
  const endpoint = await endpointOf(t, dapp);
  for (const version of VERSIONS) {
    const started = performance.now();
    const account = await newAccount(version);
    const bundler = bundlerFor(account, endpoint);
    const hash = await bundler.sendUserOperation({ calls: [{ to: TARGET, value: 0n }] });
    const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
    assert.equal(receipt.success, true, `v${version}`);
    assert.ok(
      receipt.paymaster && isAddressEqual(receipt.paymaster, paymasterOf(version)),
      `our v${version} paymaster`,
    );
    tc.diagnostic(`v${version} sponsored operation mined in ${(performance.now() - started).toFixed(0)} ms`);
  }

  // ERC20 mode on v0.7: an account holding only TUSD approves the token paymaster in its batch and pays in TUSD.
  erc20Dapp = await t.dapp({ chainId: CHAIN_ID });
  const account = await newAccount("0.7");
  const minted = await chain.wallet(anvilKeys.stranger).writeContract({
    address: token,
    abi: testTokenArtifact.abi,
    functionName: "mint",
    args: [account.address, 100_000_000n],
  });
  await chain.publicClient.waitForTransactionReceipt({ hash: minted });
  const bundler = bundlerFor(account, await endpointOf(t, erc20Dapp));
  const hash = await bundler.sendUserOperation({
    calls: [
      {
        to: token,
        value: 0n,
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: "approve",
          args: [paymasterOf("0.7", "token"), 20_000_000n],
        }),
      },
      { to: TARGET, value: 0n },
    ],
    paymasterContext: { token },
  });
  const receipt = await bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
  assert.equal(receipt.success, true, "the ERC20 operation");
  assert.ok(receipt.paymaster && isAddressEqual(receipt.paymaster, paymasterOf("0.7", "token")));
  const left = await chain.publicClient.readContract({
    address: token,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [account.address],
  });
  assert.ok(left < 100_000_000n, "the sender paid in TUSD");
});

/** An operation of a new v0.7 account, paid by our verifying paymaster and signed by the account, not sent yet. */
async function signedOperation(endpoint: string) {
  const account = await newAccount("0.7");
  const bundler = bundlerFor(account, endpoint);
  // Typed as a union of every version's shape by viem; this one is v0.7's.
  const prepared = (await bundler.prepareUserOperation({ calls: [{ to: TARGET, value: 0n }] })) as UserOperation<"0.7">;
  const signature = await account.signUserOperation(prepared);
  return { bundler, operation: { ...prepared, signature } };
}

async function sendThroughAlto(signed: Awaited<ReturnType<typeof signedOperation>>) {
  const hash = await signed.bundler.request({
    method: "eth_sendUserOperation",
    params: [formatUserOperationRequest(signed.operation), ENTRY_POINT_V07_ADDRESS],
  });
  return signed.bundler.waitForUserOperationReceipt({ hash, timeout: 60_000 });
}

test("a rotation with signers add, then remove, loses no operation signed before it; status then reports the removed key", async (tc) => {
  assert.ok(t && dapp, "the sponsoring test ran");
  const oldAddress = privateKeyToAccount(oldKey).address;
  const newAddress = privateKeyToAccount(newKey).address;
  const signedBefore = await signedOperation(await endpointOf(t, dapp));

  const added = ok(
    await contracts(["signers", "add", "--key-file", files.ownerKey, "--signer", newAddress]),
    "signers add",
  );
  measured(tc, `signers add (6 paymasters): ${added.ms.toFixed(0)} ms`, ...gasLines(added).slice(0, 1));
  assert.equal(added.stdout.match(/^sent: adding /gm)?.length, 6);
  // The service moves to the new key (another instance on the same database).
  const moved = await service(newKey, t.db);
  try {
    const signedAfter = await signedOperation(await endpointOf(moved, dapp));
    for (const [what, signed] of [
      ["signed by the old key before the rotation", signedBefore],
      ["signed by the new key", signedAfter],
    ] as const) {
      assert.equal((await sendThroughAlto(signed)).success, true, what);
    }

    const signedLate = await signedOperation(await endpointOf(t, dapp));
    const removed = ok(
      await contracts(["signers", "remove", "--key-file", files.ownerKey, "--signer", oldAddress]),
      "signers remove",
    );
    measured(tc, `signers remove (6 paymasters): ${removed.ms.toFixed(0)} ms`, ...gasLines(removed).slice(0, 1));
    const again = ok(
      await contracts(["signers", "remove", "--key-file", files.ownerKey, "--signer", oldAddress]),
      "signers remove again",
    );
    assert.equal(again.stdout.match(/^not a signer: /gm)?.length, 6, "a second removal sends nothing");

    // Signed by the old key before its removal but sent after it: the bundler refuses the signature. Hence the
    // order of a rotation: remove the old key only once what it signed has been mined or has expired.
    await assert.rejects(sendThroughAlto(signedLate), /AA34/);

    // The service still on the old key sees it within a pass: /readyz names the signer check of each paymaster, and a
    // sponsorship is refused naming it, before any signature.
    const failing = await readyWhen(t, (chain) => chain.contracts.failed.length > 0);
    assert.deepEqual(
      failing.chain.contracts.failed
        .map((failed) => `${failed.entryPointVersion} ${failed.kind} ${failed.check}`)
        .sort(),
      [
        "0.6 token signer",
        "0.6 verifying signer",
        "0.7 token signer",
        "0.7 verifying signer",
        "0.8 token signer",
        "0.8 verifying signer",
      ],
    );
    const refusal = await rpc(t, dapp, "pm_sponsorUserOperation", [v06Operation(), SPONSORED]);
    assert.equal(refusal.body.result?.paymasterAndData, "0x", JSON.stringify(refusal.body));
    assert.match(
      refusal.body.result?.reason ?? "",
      new RegExp(`fails its signer check: the service's key ${oldAddress} is not in`),
    );
    const movedReady = await readyChain(moved);
    assert.deepEqual(movedReady.chain.contracts.failed, [], "the instance on the new key stays ready");

    // A service still on the old key: status names the signer check of every paymaster, with the fix.
    const stale = await contracts(["status"]);
    assert.equal(stale.code, 1, stale.stdout);
    assert.equal(stale.stdout.match(/^FAIL signer .*is not in the signer set/gm)?.length, 6, stale.stdout);
    assert.match(stale.stdout, new RegExp(`what to do: add it with \`contracts signers add --signer ${oldAddress}\``));
    const current = await contracts(["status"], { SIGNER_KEY_FILE: writeKey("new-signer.key", newKey) });
    assert.equal(current.code, 0, current.stdout);
  } finally {
    await moved.close();
  }
});

interface ReadyChain {
  chainId: number;
  contracts: { status: string; failed: { entryPointVersion: string; kind: string; check: string; detail: string }[] };
}

async function readyChain(app: TestApp): Promise<{ status: string; chain: ReadyChain }> {
  const reply = await app.app.inject({ method: "GET", url: "/readyz" });
  const body = reply.json() as { status: string; chains: ReadyChain[] };
  const chain = body.chains.find((entry) => entry.chainId === CHAIN_ID);
  assert.ok(chain, JSON.stringify(body));
  return { status: body.status, chain };
}

/** /readyz once `holds` is true of the chain (the watch runs every CHECK_INTERVAL_MS); fails with the last answer. */
async function readyWhen(app: TestApp, holds: (chain: ReadyChain) => boolean) {
  const deadline = Date.now() + 50 * CHECK_INTERVAL_MS + 10_000;
  let last = await readyChain(app);
  while (!holds(last.chain)) {
    if (Date.now() > deadline) assert.fail(`never held: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, CHECK_INTERVAL_MS / 4));
    last = await readyChain(app);
  }
  return last;
}

const SPONSORED = {
  mode: "SPONSORED",
  calculateGasLimits: false,
  sponsorshipInfo: { smartAccountInfo: { name: "INFINITISM", version: "1.0.0" } },
};

/** A v0.6 operation of a deployed SimpleAccount calling TARGET, gas given: one the rules pass. */
function v06Operation() {
  return userOpV06("0x2222222222222222222222222222222222222222", 1, {
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [TARGET, 0n, "0x"] }),
    ...ESTIMATED_GAS,
    signature: "0x",
  });
}
