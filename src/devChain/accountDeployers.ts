// The factories the smart accounts' contracts are deployed through, besides the CREATE2 proxy anvil predeploys:
//
// - Safe's singleton factory (0x914d7Fec…): Safe deploys it on each chain with a transaction its deployer signed for
//   that chain id, and publishes the signed transaction (npm @safe-global/safe-singleton-factory). Its package carries
//   one for 31337, so the local chain gets the factory the way a public chain does: the signer is funded and the
//   transaction sent as it is. Safe 1.4.1 and Coinbase Smart Wallet go through it.
// - Biconomy's CREATE3 factory (0x988C135a…), which Nexus goes through: no transaction that reaches its address on
//   another chain is published, so its runtime code is placed with anvil_setCode. That is safe here because the code
//   keeps no state and has no immutables: where it deploys depends on its own address and the salt alone, so a copy at
//   that address deploys exactly where the one on public chains does, whoever created it.
import {
  type Address,
  getContractAddress,
  type Hex,
  isAddress,
  isAddressEqual,
  isHex,
  keccak256,
  parseTransaction,
  recoverTransactionAddress,
  type TransactionSerialized,
  toHex,
} from "viem";
import nexusData from "../../contracts/accounts/nexus.json" with { type: "json" };
import safeSingletonFactoryData from "../../contracts/accounts/safeSingletonFactory.json" with { type: "json" };
import { confirm } from "./localBatch";
import type { ChainClients } from "./localDeployment";

const SAFE_SINGLETON_FACTORY_ADDRESS: Address = "0x914d7Fec6aaC8cd542e72Bca78B30650d45643d7";
const BICONOMY_CREATE3_FACTORY_ADDRESS: Address = "0x988C135a1049Ce61730724afD342fb7C56CD2776";

/** Checks that the published transaction is signed by Safe's deployer for this chain and creates the factory. */
async function checkedSafeFactoryTransaction(chainId: number): Promise<{ signer: Address; cost: bigint; raw: Hex }> {
  const { transaction, signerAddress, address } = safeSingletonFactoryData;
  if (!isHex(transaction) || !isAddress(signerAddress) || !isAddress(address)) {
    throw new Error("contracts/accounts/safeSingletonFactory.json: expected transaction, signerAddress and address");
  }
  const parsed = parseTransaction(transaction);
  const signer = await recoverTransactionAddress({ serializedTransaction: transaction as TransactionSerialized });
  const creates = getContractAddress({ opcode: "CREATE", from: signer, nonce: BigInt(parsed.nonce ?? 0) });
  if (
    parsed.chainId !== chainId ||
    !isAddressEqual(signer, signerAddress) ||
    !isAddressEqual(creates, SAFE_SINGLETON_FACTORY_ADDRESS) ||
    !isAddressEqual(address, SAFE_SINGLETON_FACTORY_ADDRESS)
  ) {
    throw new Error(
      `the Safe singleton factory transaction is for chain ${parsed.chainId}, signed by ${signer}, and creates ` +
        `${creates}; expected chain ${chainId}, ${signerAddress} and ${SAFE_SINGLETON_FACTORY_ADDRESS}`,
    );
  }
  return { signer, cost: (parsed.gas ?? 0n) * (parsed.gasPrice ?? 0n), raw: transaction };
}

type AnvilRequest = (args: { method: string; params: unknown[] }) => Promise<unknown>;

export function anvilRequest(clients: ChainClients): AnvilRequest {
  return clients.publicClient.request as unknown as AnvilRequest;
}

async function hasCode(clients: ChainClients, address: Address): Promise<boolean> {
  const code = await clients.publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

/** Sends Safe's published transaction for this chain unless the factory is there; true when it was sent. */
async function deploySafeSingletonFactory(clients: ChainClients): Promise<boolean> {
  if (await hasCode(clients, SAFE_SINGLETON_FACTORY_ADDRESS)) return false;
  const { signer, cost, raw } = await checkedSafeFactoryTransaction(await clients.publicClient.getChainId());
  const balance = await clients.publicClient.getBalance({ address: signer });
  // The signer pays for its own transaction, as on any chain; a local chain can simply give it the ether.
  if (balance < cost) await anvilRequest(clients)({ method: "anvil_setBalance", params: [signer, toHex(cost)] });
  const hash = await clients.publicClient.sendRawTransaction({ serializedTransaction: raw });
  await confirm(clients.publicClient, hash, "deploying the Safe singleton factory");
  if (!(await hasCode(clients, SAFE_SINGLETON_FACTORY_ADDRESS))) {
    throw new Error(`deploying the Safe singleton factory: no code at ${SAFE_SINGLETON_FACTORY_ADDRESS} after ${hash}`);
  }
  return true;
}

/** Places Biconomy's CREATE3 factory's code (see the top of this file for why that is safe); true when it did. */
async function placeBiconomyCreate3Factory(clients: ChainClients): Promise<boolean> {
  const { address, runtimeCode } = nexusData.create3Factory;
  if (!isHex(runtimeCode) || !isAddress(address) || !isAddressEqual(address, BICONOMY_CREATE3_FACTORY_ADDRESS)) {
    throw new Error("contracts/accounts/nexus.json: create3Factory needs the factory's address and runtimeCode");
  }
  const current = await clients.publicClient.getCode({ address });
  if (current && keccak256(current) === keccak256(runtimeCode)) return false;
  await anvilRequest(clients)({ method: "anvil_setCode", params: [address, runtimeCode] });
  return true;
}

/** Both factories, each unless it is there already. Returns the names of those this call put there. */
export async function ensureAccountDeployers(clients: ChainClients): Promise<string[]> {
  const [safe, biconomy] = await Promise.all([
    deploySafeSingletonFactory(clients),
    placeBiconomyCreate3Factory(clients),
  ]);
  return [...(safe ? ["safeSingletonFactory"] : []), ...(biconomy ? ["biconomyCreate3Factory"] : [])];
}
