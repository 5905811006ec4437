// The embedded default's chain: when no node is configured for 31337, the service runs anvil as a child process on a
// free port (Prague rules, so EIP-7702 works), with EntryPoint v0.6, SimpleAccountFactory and our paymaster deployed,
// the same for EntryPoint v0.7 and v0.8 (plus Simple7702Account, and our token paymaster funded and staked), and the
// service's key as every paymaster's signer. The chain lives in the data folder beside the database, so that the two
// never disagree:
//
//   DATA_DIR/anvil-state.json   the chain's state (blocks, transactions, accounts), loaded at start, saved as it changes
//   DATA_DIR/local-chain.json   where the running chain answers and which process runs it (npm run demo reads it)
//
// The state is saved by us, not by anvil's own --dump-state (which truncates the file and writes it in place, so a kill
// at the wrong moment would leave half a file): every few seconds when a block was mined, once the stack is deployed,
// and on stop, each time to a temporary file renamed over the old one. A service that died without stopping its anvil
// (SIGKILL) leaves it running; the next start on the folder saves that orphan's state and ends it before starting anew.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import {
  type Address,
  createPublicClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS } from "../bindings/entryPoints/entryPoint";
import { LOCAL_ENTRY_POINT_STACKS, type LocalEntryPointStack } from "../chain/localAddresses";
import { LOCAL_CHAIN_ID } from "../chain/sponsoringChains";
import { type ChainConfig, LATER_ENTRY_POINT_VERSIONS, type LaterEntryPointVersion } from "../config";
import { ACCOUNT_FAMILIES, deployAccountFamilies } from "./accountFamilies";
import { type Anvil, AnvilStartError, startAnvil } from "./anvil";
import { localVerifyingPaymasterDeployment, simpleAccountFactoryDeployment } from "./deployments";
import { sendTogether } from "./localBatch";
import {
  type ChainClients,
  type DeployOutcome,
  deployAllLocalStacks,
  type LaterEntryPointStack,
  type LocalStack,
  signerAdditions,
} from "./localDeployment";
import { tokenPaymasterV07Funding } from "./localTokenPaymastersV07";
import { LOCAL_TOKENS, type LocalTokenSetup, prepareLocalTokenStack } from "./localTokens";
import { LOCAL_TEST_TOKEN_ADDRESS, LOCAL_TOKEN_PAYMASTER_ADDRESS } from "./tokenDeployment";

export { wantsLocalChain } from "./localChainWanted";

/**
 * anvil's first default accounts (mnemonic "test test test test test test test test test test test junk"), each
 * funded with 10,000 ETH on every local chain. Their keys are public: local chains only.
 */
export const ANVIL_DEFAULT_KEYS = {
  /** #0: deploys the stack and owns the paymasters (so it can add the service's key to their signer sets). */
  deployer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  /** #1: sends handleOps in the demo, as a bundler would. */
  bundler: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  /** #2: the demo's funding wallet, which deposits for its dApp. */
  fundingWallet: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  /** #5: deploys the smart accounts' families (accountFamilies.ts), beside #0's deployments. */
  accountsDeployer: "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba",
} as const satisfies Record<string, Hex>;

export const LOCAL_CHAIN_FILE = "local-chain.json";
export const ANVIL_STATE_FILE = "anvil-state.json";
/** Written by anvil itself (its accounts); its path in anvil's command line also tells our anvil from any other. */
const ANVIL_CONFIG_FILE = "anvil-config.json";

/** What DATA_DIR/local-chain.json holds while the service runs its local chain. */
export interface LocalChainInfo {
  chainId: number;
  rpcUrl: string;
  anvilPid: number;
  servicePid: number;
  stateFile: string;
  entryPoint: Address;
  simpleAccountFactory: Address;
  verifyingPaymaster: Address;
  /** EntryPoint v0.7 and v0.8 with their factory and our paymasters (the fields above are v0.6's). */
  entryPoints: Record<LaterEntryPointVersion, LocalEntryPointStack>;
  startedAt: string;
}

export interface LocalChain {
  info: LocalChainInfo;
  rpcUrl: string;
  /** True when the chain was loaded from the data folder's saved state, false on a first start. */
  restored: boolean;
  /** The contracts deployed by this start (none once they are in the saved state); later versions' names end "v0.7". */
  deployed: string[];
  /** True when this start added the service's key to a paymaster's signer set (any EntryPoint version). */
  signerAdded: boolean;
  /** The same for ERC20 mode's token paymaster, test token and price feed (src/devChain/localTokens.ts). */
  tokens: LocalTokenSetup;
  /**
   * How long anvil took to answer, and the deployment after it; accountsMs is how long the smart accounts' families
   * took, beside the rest of the deployment (so not all of it is added to deployMs).
   */
  timings: { anvilMs: number; deployMs: number; accountsMs: number };
  /** Writes the chain's state to the data folder now. */
  saveState(): Promise<void>;
  /** Saves the state, ends anvil and removes local-chain.json; safe to call twice. */
  stop(): Promise<void>;
}

export interface LocalChainOptions {
  dataDir: string;
  /** The service's verifying signer: made the paymaster's signer when it is not already. */
  signer: Address;
  /** The whole start (anvil, deployment, signer) fails with a clear error past this. */
  startTimeoutMs?: number;
  /** How often the state is saved when a block was mined since the last save. */
  saveIntervalMs?: number;
  /** Problems that do not stop the chain (a failed periodic save). */
  warn?: (message: string) => void;
}

export class LocalChainError extends Error {
  override name = "LocalChainError";
}

/**
 * A bound against a deployment that hangs, not a speed target: deploying the v0.6, v0.7 and v0.8 stacks takes seconds
 * on a quiet machine, but passed 30 s on a 2-core machine running a browser, a bundler and other chains beside it.
 */
export const LOCAL_CHAIN_START_TIMEOUT_MS = 90_000;
const SAVE_INTERVAL_MS = 2_000;
/** Each call to anvil is bounded, so neither a start nor a stop can hang on it. */
const RPC_TIMEOUT_MS = 5_000;
const ORPHAN_STOP_GRACE_MS = 2_000;

/** The configured chains with the local chain's RPC set on 31337, and its test token unless 31337 lists tokens. */
export function withLocalChain(
  chains: ReadonlyMap<number, ChainConfig>,
  chain: Pick<LocalChain, "rpcUrl">,
): ReadonlyMap<number, ChainConfig> {
  const result = new Map(chains);
  const local = chains.get(LOCAL_CHAIN_ID);
  if (local) result.set(LOCAL_CHAIN_ID, { ...local, rpcUrl: chain.rpcUrl, tokens: local.tokens ?? [...LOCAL_TOKENS] });
  return result;
}

/** The running local chain of a data folder, as its service wrote it; undefined when none runs. */
export function readLocalChainInfo(dataDir: string): LocalChainInfo | undefined {
  let info: LocalChainInfo;
  try {
    info = JSON.parse(readFileSync(path.join(dataDir, LOCAL_CHAIN_FILE), "utf8")) as LocalChainInfo;
  } catch {
    return undefined;
  }
  return typeof info.rpcUrl === "string" && typeof info.anvilPid === "number" && isAlive(info.anvilPid)
    ? info
    : undefined;
}

/**
 * Starts the local chain of `dataDir` (see the top of this file) within `startTimeoutMs`. A start that fails ends the
 * anvil it started before it throws.
 */
export async function startLocalChain(options: LocalChainOptions): Promise<LocalChain> {
  const { dataDir } = options;
  const timeoutMs = options.startTimeoutMs ?? LOCAL_CHAIN_START_TIMEOUT_MS;
  // This module's times are real time: anvil's start and stop, and the start's date, come before the service's context
  // exists (main.ts starts the chain first) and are waits on another process, which no service clock moves.
  const deadline = Date.now() + timeoutMs;
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const stateFile = path.join(dataDir, ANVIL_STATE_FILE);
  const configFile = path.join(dataDir, ANVIL_CONFIG_FILE);
  await takeOverOrphan(dataDir, stateFile);

  const restored = existsSync(stateFile);
  const started = performance.now();
  let anvil: Anvil;
  try {
    anvil = await startAnvil({
      chainId: LOCAL_CHAIN_ID,
      startTimeoutMs: Math.max(1, deadline - Date.now()),
      // Prague pinned rather than anvil's "latest": EIP-7702 needs it, and a newer default must not change the chain.
      args: ["--hardfork", "prague", "--config-out", configFile, ...(restored ? ["--load-state", stateFile] : [])],
      detached: true,
    });
  } catch (error) {
    const hint = restored
      ? `\nIf ${stateFile} is damaged, move it away to start a fresh chain (what the database recorded about the ` +
        "old chain then no longer matches it)."
      : "";
    throw new LocalChainError(
      `${START_FAILURE}: ${error instanceof AnvilStartError ? error.message : String(error)}${hint}`,
    );
  }
  const anvilMs = performance.now() - started;

  const clients = localClients(anvil.rpcUrl);
  let deployed: string[];
  let signerAdded: boolean;
  let tokens: LocalTokenSetup;
  let accountsMs: number;
  try {
    const loadedBlock = restored ? await clients.publicClient.getBlockNumber({ cacheTime: 0 }) : undefined;
    const progress = { step: "deploying the EntryPoint stacks" };
    ({ deployed, signerAdded, tokens, accountsMs } = await withDeadline(
      deployAndAddSigner(
        clients,
        localClients(anvil.rpcUrl, ANVIL_DEFAULT_KEYS.accountsDeployer),
        options.signer,
        progress,
      ),
      deadline,
      () => `deploying the contracts took longer than ${timeoutMs} ms (still ${progress.step})`,
    ));
    // The deployment is on disk before anything can use the chain. A restart that mined nothing has it there already,
    // and skips writing the same state again (megabytes with the EntryPoints' code).
    if (loadedBlock === undefined || (await clients.publicClient.getBlockNumber({ cacheTime: 0 })) !== loadedBlock) {
      await saveState(anvil.rpcUrl, stateFile);
    }
  } catch (error) {
    await anvil.stop();
    throw new LocalChainError(`${START_FAILURE}: ${(error as Error).message}`);
  }
  const deployMs = performance.now() - started - anvilMs;

  const info: LocalChainInfo = {
    chainId: LOCAL_CHAIN_ID,
    rpcUrl: anvil.rpcUrl,
    anvilPid: anvil.pid,
    servicePid: process.pid,
    stateFile,
    entryPoint: ENTRY_POINT_V06_ADDRESS,
    simpleAccountFactory: simpleAccountFactoryDeployment.address,
    verifyingPaymaster: localVerifyingPaymasterDeployment.address,
    entryPoints: { ...LOCAL_ENTRY_POINT_STACKS },
    startedAt: new Date().toISOString(),
  };
  writeAtomically(path.join(dataDir, LOCAL_CHAIN_FILE), JSON.stringify(info, null, 2));

  const saver = new StateSaver(anvil.rpcUrl, stateFile, clients.publicClient, options.warn);
  // A failed save is reported by the saver (once) and tried again at the next tick.
  const timer = setInterval(() => saver.saveIfMined().catch(() => {}), options.saveIntervalMs ?? SAVE_INTERVAL_MS);
  timer.unref();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(timer);
      try {
        await saver.save();
      } catch (error) {
        options.warn?.(`local chain: the state could not be saved before stopping: ${(error as Error).message}`);
      }
      await anvil.stop();
      rmSync(path.join(dataDir, LOCAL_CHAIN_FILE), { force: true });
    })();
    return stopping;
  };
  return {
    info,
    rpcUrl: anvil.rpcUrl,
    restored,
    deployed,
    signerAdded,
    tokens,
    timings: { anvilMs: Math.round(anvilMs), deployMs: Math.round(deployMs), accountsMs: Math.round(accountsMs) },
    saveState: () => saver.save(),
    stop,
  };
}

/** The lines the service logs at start: where the chain is, what is on it, and that it is no real network. */
export function describeLocalChain(chain: LocalChain): string {
  const { info } = chain;
  const origin = chain.restored
    ? `state loaded from ${info.stateFile}`
    : `fresh chain, state kept in ${info.stateFile}`;
  return (
    `local development chain ${info.chainId} (anvil, not a real network) at ${info.rpcUrl}: ${origin}; ` +
    `paymaster ${info.verifyingPaymaster}, EntryPoint ${info.entryPoint}, SimpleAccountFactory ` +
    `${info.simpleAccountFactory}; ${LATER_ENTRY_POINT_VERSIONS.map(
      (version) =>
        `EntryPoint v${version} ${info.entryPoints[version].entryPoint} with paymaster ` +
        `${info.entryPoints[version].verifyingPaymaster} and token paymaster ${info.entryPoints[version].tokenPaymaster}`,
    ).join(", ")}; ERC20 mode: token paymaster ${LOCAL_TOKEN_PAYMASTER_ADDRESS}, test token TUSD ` +
    `${LOCAL_TEST_TOKEN_ADDRESS}; smart accounts at their clients' default addresses: ` +
    `${ACCOUNT_FAMILIES.map((family) => family.name).join(", ")}; ` +
    "funded accounts: anvil's default mnemonic (10,000 ETH each). " +
    "Try it: npm run demo"
  );
}

const START_FAILURE = "the local chain (anvil) did not start (set LOCAL_CHAIN=off to start without it)";

/**
 * The smart accounts' families (accountFamilies.ts) are deployed by their own account, beside the rest rather than
 * after it: they depend on nothing the other deployments make, and a transaction each, mined one block at a time, made
 * them the longest part of a first start when they waited their turn. `progress.step` names the other step under way,
 * for the message of a start that passes its deadline.
 */
async function deployAndAddSigner(
  clients: ChainClients,
  accountsClients: ChainClients,
  signer: Address,
  progress: { step: string },
): Promise<{ deployed: string[]; signerAdded: boolean; tokens: LocalTokenSetup; accountsMs: number }> {
  const accountsStarted = performance.now();
  const [stacks, accounts] = await Promise.all([
    deployStacksAndAddSigner(clients, signer, progress),
    deployAccountFamilies(accountsClients).then((deployed) => ({ deployed, ms: performance.now() - accountsStarted })),
  ]);
  return { ...stacks, deployed: [...stacks.deployed, ...accounts.deployed], accountsMs: accounts.ms };
}

async function deployStacksAndAddSigner(
  clients: ChainClients,
  signer: Address,
  progress: { step: string },
): Promise<{ deployed: string[]; signerAdded: boolean; tokens: LocalTokenSetup }> {
  const { stack, later } = await deployAllLocalStacks(clients);
  progress.step = "adding the service's key to the paymasters' signers and funding the token paymasters";
  const deployed = [
    ...deployedNames(stack, ""),
    ...LATER_ENTRY_POINT_VERSIONS.flatMap((version) => deployedNames(later[version], ` v${version}`)),
  ];
  // Every paymaster's signer addition and the later token paymasters' deposits and stakes: read together, sent together.
  const [additions, funding] = await Promise.all([
    signerAdditions(clients, signer, [
      stack.verifyingPaymaster.address,
      ...LATER_ENTRY_POINT_VERSIONS.flatMap((version) => [
        later[version].verifyingPaymaster.address,
        later[version].tokenPaymaster.address,
        later[version].permitTokenPaymaster.address,
      ]),
    ]),
    tokenPaymasterV07Funding(
      clients,
      LATER_ENTRY_POINT_VERSIONS.flatMap((version) =>
        [later[version].tokenPaymaster, later[version].permitTokenPaymaster].map(({ address }) => ({
          paymaster: address,
          entryPoint: later[version].entryPoint.address,
        })),
      ),
    ),
  ]);
  await sendTogether(clients, [...additions, ...funding]);
  progress.step = "preparing the test token";
  return { deployed, signerAdded: additions.length > 0, tokens: await prepareLocalTokenStack(clients, signer) };
}

function deployedNames(stack: LocalStack | LaterEntryPointStack, suffix: string): string[] {
  return Object.entries(stack)
    .filter(([, outcome]: [string, DeployOutcome]) => outcome.deployed)
    .map(([name]) => `${name}${suffix}`);
}

function localClients(rpcUrl: string, key: Hex = ANVIL_DEFAULT_KEYS.deployer): ChainClients {
  const chain = defineChain({
    id: LOCAL_CHAIN_ID,
    name: "Local development chain (anvil)",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const transport = http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0 });
  // anvil mines each transaction at once: poll receipts every few ms rather than viem's default of seconds.
  return {
    publicClient: createPublicClient({ chain, transport, pollingInterval: 20 }) as PublicClient,
    walletClient: createWalletClient({
      account: privateKeyToAccount(key),
      chain,
      transport,
      pollingInterval: 20,
    }),
  };
}

function withDeadline<T>(work: Promise<T>, deadline: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message())), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Saves the state when a block was mined since the last save; one save at a time. */
class StateSaver {
  #savedBlock: bigint | undefined;
  #running: Promise<void> = Promise.resolve();
  #warned = false;

  constructor(
    readonly rpcUrl: string,
    readonly file: string,
    readonly client: PublicClient,
    readonly warn?: (message: string) => void,
  ) {}

  saveIfMined(): Promise<void> {
    return this.#queue(async () => {
      const block = await this.client.getBlockNumber({ cacheTime: 0 });
      if (block !== this.#savedBlock) await this.#save(block);
    });
  }

  save(): Promise<void> {
    return this.#queue(async () => this.#save(await this.client.getBlockNumber({ cacheTime: 0 })));
  }

  async #save(block: bigint): Promise<void> {
    await saveState(this.rpcUrl, this.file);
    this.#savedBlock = block;
    this.#warned = false;
  }

  #queue(work: () => Promise<void>): Promise<void> {
    const next = this.#running.then(work);
    this.#running = next.catch((error: Error) => {
      if (!this.#warned) this.warn?.(`local chain: saving the state failed: ${error.message}`);
      this.#warned = true;
    });
    return next;
  }
}

/** anvil_dumpState answers the state gzipped; --load-state reads it plain. Written whole or not at all. */
async function saveState(rpcUrl: string, file: string): Promise<void> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "anvil_dumpState", params: [] }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const body = (await response.json()) as { result?: string; error?: { message: string } };
  if (typeof body.result !== "string") {
    throw new Error(`anvil_dumpState failed: ${body.error?.message ?? `HTTP ${response.status}`}`);
  }
  writeAtomically(file, gunzipSync(Buffer.from(body.result.slice(2), "hex")));
}

function writeAtomically(file: string, data: string | Buffer): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, data, { mode: 0o600 });
  renameSync(temporary, file);
}

/**
 * An anvil of this folder that outlived its service (killed with SIGKILL, so it could not stop it): its state is newer
 * than the saved one, so it is saved first; then the process is ended. An anvil whose service still runs is in use.
 */
async function takeOverOrphan(dataDir: string, stateFile: string): Promise<void> {
  const infoFile = path.join(dataDir, LOCAL_CHAIN_FILE);
  const info = readLocalChainInfo(dataDir);
  if (info && isOurAnvil(info.anvilPid, dataDir)) {
    if (info.servicePid !== process.pid && isAlive(info.servicePid)) {
      throw new LocalChainError(
        `the local chain of ${dataDir} is in use by process ${info.servicePid} (anvil ${info.anvilPid} at ${info.rpcUrl})`,
      );
    }
    try {
      await saveState(info.rpcUrl, stateFile);
    } catch {
      // It does not answer: the saved state is the newest there is.
    }
    await endProcess(info.anvilPid);
  }
  rmSync(infoFile, { force: true });
}

/** Its command line names this folder's anvil-config.json: a recycled pid cannot pass for it. */
function isOurAnvil(pid: number, dataDir: string): boolean {
  const commandLine = processCommandLine(pid);
  return commandLine?.includes(path.join(dataDir, ANVIL_CONFIG_FILE)) ?? false;
}

function processCommandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    // not Linux: ask ps
  }
  try {
    return execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8", timeout: 2_000 });
  } catch {
    return undefined;
  }
}

async function endProcess(pid: number): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  const deadline = Date.now() + ORPHAN_STOP_GRACE_MS;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (isAlive(pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
}

/** A zombie (ended, not yet reaped by an init that reaps slowly, as an orphan's may be) counts as gone. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // not Linux
  }
}
