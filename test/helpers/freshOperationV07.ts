// The first operation of a new permissionless SimpleAccount at a later EntryPoint, as a wallet sends it to be estimated
// and sponsored: the factory, a batch of calls and fees above the chain's base fee, but no gas limits, paymaster
// fields or signature. The account comes with it, to sign once the service has answered. Several RPC and L2 files
// build this same operation.
import { toSimpleSmartAccount } from "permissionless/accounts";
import type { Address, Hex, PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { LaterEntryPointVersion } from "../../src/config";

export interface FreshOperationOptions {
  /** What the account's batch calls. */
  calls: { to: Address; value: bigint; data?: Hex }[];
  /** The priority fee, 1 gwei unless given; maxFeePerGas is twice the base fee plus it. */
  priorityFee?: bigint;
}

export async function freshOperationV07(
  client: PublicClient,
  version: LaterEntryPointVersion,
  stack: { entryPoint: Address; simpleAccountFactory: Address },
  { calls, priorityFee = 1_000_000_000n }: FreshOperationOptions,
) {
  // permissionless 0.4.1 has no v0.9 account; its v0.8 SimpleAccount signs as v0.9's does (the EIP-712 hash).
  const account = await toSimpleSmartAccount({
    client,
    owner: privateKeyToAccount(generatePrivateKey()),
    entryPoint: { address: stack.entryPoint, version: version === "0.7" ? "0.7" : "0.8" },
    factoryAddress: stack.simpleAccountFactory,
  });
  const block = await client.getBlock();
  const op = {
    sender: account.address,
    nonce: 0n,
    ...(await account.getFactoryArgs()),
    callData: await account.encodeCalls(calls),
    maxPriorityFeePerGas: priorityFee,
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + priorityFee,
  };
  return { account, op };
}
