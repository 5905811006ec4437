// Transactions to the local chain sent together rather than each the usual way: signed here with consecutive nonces,
// sent back to back in nonce order, confirmed at once. The node mines them in nonce order, so a deployment may depend
// on the one before it. Calls to the node are most of the local chain's start, and each transaction sent
// the usual way (fill, send, poll the receipt) costs several in a row. Only for an account that sends nothing else
// meanwhile: the local chain's deployer.
import { type Address, concat, type Hex, type PublicClient, TransactionReceiptNotFoundError } from "viem";
import { CREATE2_DEPLOYER_ADDRESS, CREATE2_SALT, type Create2Deployment } from "./deployments";
import type { ChainClients, DeployOutcome } from "./localDeployment";

async function hasCode(publicClient: PublicClient, address: Address): Promise<boolean> {
  const code = await publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

/** How often a local transaction's receipt is asked for, and for how long at most. */
const RECEIPT_POLL_MS = 20;
const RECEIPT_WAIT_MS = 60_000;

/**
 * Waits until the local chain has mined `hash`; throws if it reverted or was not mined within a minute. It asks for
 * the receipt itself, every few ms, rather than through viem's waitForTransactionReceipt, which asks again only when
 * it sees a new block: the local chain mines only when a transaction arrives, so there a receipt not found at the
 * block that holds it would never be asked for again.
 */
export async function confirm(publicClient: PublicClient, hash: Hex, what: string): Promise<void> {
  // Real time: a wait on the local chain's mining, outside any service context (the chain is set up before one exists).
  const deadline = Date.now() + RECEIPT_WAIT_MS;
  for (;;) {
    const receipt = await publicClient.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      throw error;
    });
    if (receipt) {
      if (receipt.status !== "success") throw new Error(`${what}: transaction ${hash} reverted`);
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: transaction ${hash} not mined within ${RECEIPT_WAIT_MS} ms (${await poolState(publicClient, hash)})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, RECEIPT_POLL_MS));
  }
}

export interface BatchTransaction {
  /** For an error message: what the transaction does. */
  what: string;
  to: Address;
  data: Hex;
  /** Given, not estimated: a transaction may depend on one sent with it that is not mined yet. */
  gas: bigint;
  /** Wei sent with the call (a deposit, a stake). */
  value?: bigint;
}

const PRIORITY_FEE = 1_000_000_000n;
/** 1.125^25 ≈ 19: twenty times the base fee outlasts 25 full blocks in a row. */
const BASE_FEE_HEADROOM = 20n;

/** Sends the transactions in order and resolves once all are mined; throws if one reverted. Returns their hashes. */
export async function sendTogether(clients: ChainClients, transactions: readonly BatchTransaction[]): Promise<Hex[]> {
  if (transactions.length === 0) return [];
  const { publicClient, walletClient } = clients;
  const { account } = walletClient;
  if (account.type !== "local") throw new Error("sending transactions together needs a local account: it signs them");
  const [chainId, nonce, block] = await Promise.all([
    publicClient.getChainId(),
    publicClient.getTransactionCount({ address: account.address, blockTag: "pending" }),
    publicClient.getBlock(),
  ]);
  // The batch's deployments fill block after block, and each full block raises the base fee by an eighth: a fee cap
  // of twice today's base fee was overtaken after about six, and the rest then waited in the pool for a base fee that
  // no block would lower (seen in CI: pending 0, queued 13). The deployer is funded; it pays the base fee, not the cap.
  const maxFeePerGas = BASE_FEE_HEADROOM * (block.baseFeePerGas ?? 0n) + PRIORITY_FEE;
  const signed = await Promise.all(
    transactions.map((transaction, index) =>
      account.signTransaction({
        type: "eip1559",
        chainId,
        to: transaction.to,
        data: transaction.data,
        gas: transaction.gas,
        ...(transaction.value ? { value: transaction.value } : {}),
        nonce: nonce + index,
        maxFeePerGas,
        maxPriorityFeePerGas: PRIORITY_FEE,
      }),
    ),
  );
  // Sent one after the other, in nonce order. Sent at once, they reached the node in any order, and once in CI a
  // transaction of such a batch was not mined within a minute, which a nonce gap the node never closed would explain.
  const hashes: Hex[] = [];
  for (const serializedTransaction of signed)
    hashes.push(await publicClient.sendRawTransaction({ serializedTransaction }));
  // anvil mines what arrived together into one block, as much as fits its gas limit, and may leave the rest pending
  // until another transaction comes: nothing else comes here, so pending ones are mined by hand until all are in.
  const nudge = setInterval(() => void minePending(publicClient), NUDGE_INTERVAL_MS);
  try {
    await Promise.all(hashes.map((hash, index) => confirm(publicClient, hash, transactions[index]?.what ?? "")));
  } finally {
    clearInterval(nudge);
  }
  return hashes;
}

const NUDGE_INTERVAL_MS = 200;

/** For the message of a transaction never mined: whether the node knows it, and what its pool holds. */
async function poolState(publicClient: PublicClient, hash: Hex): Promise<string> {
  const request = publicClient.request as unknown as (args: { method: string; params: unknown[] }) => Promise<unknown>;
  const [transaction, pool] = await Promise.all([
    request({ method: "eth_getTransactionByHash", params: [hash] }).catch((error: Error) => error.message),
    request({ method: "txpool_status", params: [] }).catch((error: Error) => error.message),
  ]);
  const known = transaction && typeof transaction === "object" ? "known to the node" : "unknown to the node";
  return `${known}; pool ${JSON.stringify(pool)}`;
}

/**
 * evm_mine when anvil's pool holds transactions: pending ones are mined; queued ones wait for a lower base fee, which
 * each block with room to spare brings. A node without these methods is left alone.
 */
async function minePending(publicClient: PublicClient): Promise<void> {
  const request = publicClient.request as unknown as (args: { method: string; params: unknown[] }) => Promise<unknown>;
  try {
    const status = (await request({ method: "txpool_status", params: [] })) as { pending?: string; queued?: string };
    const waiting = BigInt(status.pending ?? "0x0") + BigInt(status.queued ?? "0x0");
    if (waiting > 0n) await request({ method: "evm_mine", params: [] });
  } catch {
    // not anvil, or it is stopping: the receipts' wait decides
  }
}

/** EntryPoint v0.8, the largest deployment, takes 5.0 million; a shortfall shows as missing code. */
const DEPLOYMENT_GAS = 8_000_000n;

/**
 * CREATE2 deployments through the deterministic deployer, in order (object keys keep their insertion order), sent
 * together; those whose address already has code are skipped.
 */
export async function deployCreate2Batch<Name extends string>(
  clients: ChainClients,
  deployments: Readonly<Record<Name, Create2Deployment>>,
): Promise<Record<Name, DeployOutcome>> {
  const { publicClient } = clients;
  const entries = Object.entries(deployments) as [Name, Create2Deployment][];
  const [deployerPresent, ...present] = await Promise.all([
    hasCode(publicClient, CREATE2_DEPLOYER_ADDRESS),
    ...entries.map(([, deployment]) => hasCode(publicClient, deployment.address)),
  ]);
  const outcomes = Object.fromEntries(
    entries.map(([name, deployment]) => [name, { address: deployment.address, deployed: false }]),
  ) as Record<Name, DeployOutcome>;
  const missing = entries.filter((_, index) => !present[index]);
  if (missing.length === 0) return outcomes;
  if (!deployerPresent) {
    throw new Error(`no CREATE2 deployer at ${CREATE2_DEPLOYER_ADDRESS} on this chain (anvil predeploys it)`);
  }
  const hashes = await sendTogether(
    clients,
    missing.map(([, deployment]) => ({
      what: `deploying ${deployment.name}`,
      to: CREATE2_DEPLOYER_ADDRESS,
      data: concat([deployment.salt ?? CREATE2_SALT, deployment.initCode]),
      gas: DEPLOYMENT_GAS,
    })),
  );
  // The deployer does not revert when the creation fails; only code at the computed address proves it worked.
  const landed = await Promise.all(missing.map(([, deployment]) => hasCode(publicClient, deployment.address)));
  for (const [index, [name, deployment]] of missing.entries()) {
    const transactionHash = hashes[index] as Hex;
    if (!landed[index]) {
      throw new Error(
        `deploying ${deployment.name}: no code at ${deployment.address} after transaction ${transactionHash}`,
      );
    }
    outcomes[name] = { address: deployment.address, deployed: true, transactionHash };
  }
  return outcomes;
}
