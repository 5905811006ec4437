// What every subcommand of the contracts command shares: the node, the owner's key, the service's signer address, the
// report (lines for a person, or JSON for a program) and sending a transaction with its hash and receipt status.
import { existsSync } from "node:fs";
import {
  type Account,
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  formatEther,
  type Hex,
  http,
  type PublicClient,
  type Transport,
  type WalletClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { type Config, loadConfig } from "../../config";
import { readKeyFile } from "../../keyFile";
import { openSigner } from "../../signer/openSigner";
import { CommandError } from "./options";

export interface Reporter {
  /** A line for the person running the command; on stderr with --json, so that stdout is the JSON alone. */
  say(line: string): void;
  json: boolean;
}

export function reporter(json: boolean): Reporter {
  return { json, say: (line) => (json ? console.error(line) : console.log(line)) };
}

export interface Node {
  publicClient: PublicClient;
  chain: Chain;
  chainId: number;
  rpcUrl: string;
}

/** Answers within this or the command says the node does not answer (a deploy waits for receipts longer). */
const RPC_TIMEOUT_MS = 30_000;

export async function connect(rpcUrl: string): Promise<Node> {
  const probe = createPublicClient({ transport: http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }) });
  let chainId: number;
  try {
    chainId = await probe.getChainId();
  } catch (error) {
    throw new CommandError(
      `the node at --rpc-url does not answer (${firstLine(error)}): check the URL and the network`,
    );
  }
  const chain = defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const publicClient = createPublicClient({
    chain,
    transport: http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }),
    pollingInterval: 250,
  }) as PublicClient;
  return { publicClient, chain, chainId, rpcUrl };
}

export type OwnerWallet = WalletClient<Transport, Chain, Account>;

/** The owner's key, from a file only its owner may read: a key never comes from the command line. */
export function ownerWallet(node: Node, keyFile: string): OwnerWallet {
  const key = readKeyFile(
    { path: keyFile, createIfMissing: false },
    {
      label: "owner key",
      variables: "--key-file",
      why: "the owner's key signs and pays for the transactions",
      generate: generatePrivateKey,
    },
  ) as Hex;
  return createWalletClient({ account: privateKeyToAccount(key), chain: node.chain, transport: http(node.rpcUrl) });
}

/** The service's configuration, as the service reads it (CHAINS_FILE, SIGNER_* settings, DATA_DIR). */
export interface ServiceSide {
  config: Config;
  /** The address of the key the service signs with. */
  signer: Address;
}

export function serviceSide(): ServiceSide {
  const config = loadConfig();
  const source = config.signerKey;
  // The service makes DATA_DIR/signer.key on its first start; this command never makes one up, since the service
  // would then sign with a key nobody added, or the command would add a key no service uses.
  if (source.kind === "file" && !existsSync(source.path)) {
    throw new CommandError(
      `no signer key at ${source.path}: start the service once (it makes the key there) or set SIGNER_KEY_FILE or SIGNER_PRIVATE_KEY as the service has them`,
    );
  }
  // The same opening as the service's: a key from the environment or a file, or a key in a PKCS#11 token (SIGNER_PKCS11_*),
  // whose address is read from the token and the token left at once.
  const signer = openSigner({ ...source, ...(source.kind === "file" ? { createIfMissing: false } : {}) });
  try {
    return { config, signer: signer.address };
  } finally {
    signer.close?.();
  }
}

export interface Transaction {
  /** What it does, in words: "deploying VerifyingPaymasterV07 for EntryPoint v0.7". */
  what: string;
  to: Address;
  data: Hex;
  value?: bigint;
}

export interface SentTransaction {
  what: string;
  hash: Hex;
  status: "success" | "reverted";
  gasUsed: string;
  blockNumber: string;
}

/**
 * Sends one transaction and waits for its receipt, printing the hash when sent and the status when mined. With
 * dryRun it prints what would be sent and sends nothing. A reverted transaction stops the command: the steps after it
 * depend on it.
 */
export async function send(
  node: Node,
  wallet: OwnerWallet,
  transaction: Transaction,
  report: Reporter,
  dryRun: boolean,
): Promise<SentTransaction | undefined> {
  const value = transaction.value ?? 0n;
  const valueText = value > 0n ? `, value ${formatEther(value)}` : "";
  if (dryRun) {
    report.say(
      `would send: ${transaction.what}: to ${transaction.to}${valueText}, ${(transaction.data.length - 2) / 2} bytes of data`,
    );
    return undefined;
  }
  let hash: Hex;
  try {
    hash = await wallet.sendTransaction({ to: transaction.to, data: transaction.data, value });
  } catch (error) {
    throw new CommandError(
      `${transaction.what}: not sent, the node refused it (${firstLine(error)}): if it is about funds, ${wallet.account.address} must hold the gas${valueText}; fix that and run the command again (it skips what is done)`,
    );
  }
  report.say(`sent: ${transaction.what}: ${hash}`);
  const receipt = await node.publicClient.waitForTransactionReceipt({ hash, timeout: 300_000 });
  report.say(`  mined in block ${receipt.blockNumber}: ${receipt.status}, gas used ${receipt.gasUsed}`);
  if (receipt.status !== "success") {
    throw new CommandError(
      `${transaction.what}: transaction ${hash} reverted; run \`status\` to see what is wrong, fix it and run the command again`,
    );
  }
  return {
    what: transaction.what,
    hash,
    status: receipt.status,
    gasUsed: receipt.gasUsed.toString(),
    blockNumber: receipt.blockNumber.toString(),
  };
}

export function firstLine(error: unknown): string {
  const message = (error as { shortMessage?: string; message?: string }).shortMessage ?? String(error);
  return message.split("\n")[0] ?? message;
}
