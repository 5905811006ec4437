// The EntryPoint v0.6 operation both v0.6 demos send (sponsored in demo.ts, paid in tokens in demoErc20.ts): a new
// SimpleAccount that its first operation deploys (initCode), whose call has the factory create a second account for
// another owner, there to see afterwards. Once the service has answered, the owner signs the operation with the gas
// values and paymasterAndData it signed, and the bundler's account sends it in handleOps.
import {
  type Account,
  type Address,
  type Chain,
  concat,
  encodeFunctionData,
  type Hex,
  type PublicClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
} from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../bindings/entryPoints/entryPoint";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { simpleAccountFactoryAbi } from "../devChain/simpleAccount";

export interface NewSimpleAccount {
  /** Signs the account's operations. */
  owner: PrivateKeyAccount;
  /** The account's address, before it is deployed. */
  sender: Address;
  /** The factory's createAccount for the owner, which deploys the account with its first operation. */
  initCode: Hex;
  /** Another new owner, and the factory's createAccount for it: what the operation calls. */
  otherOwner: Address;
  createOther: Hex;
  /** The account that call creates. */
  created: Address;
}

/** A new owner's SimpleAccount from `factory`, not deployed, and the second account its first call creates. */
export async function newSimpleAccount(publicClient: PublicClient, factory: Address): Promise<NewSimpleAccount> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const otherOwner = privateKeyToAccount(generatePrivateKey()).address;
  const createAccount = (who: Address) =>
    encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [who, 0n] });
  const [sender, created] = await Promise.all(
    [owner.address, otherOwner].map((who) =>
      publicClient.readContract({
        address: factory,
        abi: simpleAccountFactoryAbi,
        functionName: "getAddress",
        args: [who, 0n],
      }),
    ),
  );
  return {
    owner,
    sender: sender as Address,
    initCode: concat([factory, createAccount(owner.address)]),
    otherOwner,
    createOther: createAccount(otherOwner),
    created: created as Address,
  };
}

/** The gas values and paymasterAndData of pm_sponsorUserOperation's answer, as the service sends them. */
export interface SponsoredGas {
  paymasterAndData: Hex;
  callGasLimit: number;
  verificationGasLimit: number;
  preVerificationGas: string;
  maxFeePerGas: Hex;
  maxPriorityFeePerGas: Hex;
}

/** The account's first operation with what the service signed, signed by the owner over the EntryPoint's hash. */
export async function ownerSigned(
  publicClient: PublicClient,
  account: NewSimpleAccount,
  callData: Hex,
  sponsored: SponsoredGas,
): Promise<{ op: UserOperation; userOpHash: Hex }> {
  const unsigned: UserOperation = {
    sender: account.sender,
    nonce: 0n,
    initCode: account.initCode,
    callData,
    callGasLimit: BigInt(sponsored.callGasLimit),
    verificationGasLimit: BigInt(sponsored.verificationGasLimit),
    preVerificationGas: BigInt(sponsored.preVerificationGas),
    maxFeePerGas: BigInt(sponsored.maxFeePerGas),
    maxPriorityFeePerGas: BigInt(sponsored.maxPriorityFeePerGas),
    paymasterAndData: sponsored.paymasterAndData,
    signature: "0x",
  };
  const userOpHash = await publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getUserOpHash",
    args: [unsigned],
  });
  const signature = await account.owner.signMessage({ message: { raw: userOpHash } });
  return { op: { ...unsigned, signature }, userOpHash };
}

/** handleOps([op]) sent by the bundler's account to EntryPoint v0.6, and its receipt once mined. */
export async function sendHandleOps(
  publicClient: PublicClient,
  bundler: WalletClient<Transport, Chain, Account>,
  op: UserOperation,
): Promise<{ hash: Hex; receipt: TransactionReceipt }> {
  const hash = await bundler.writeContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "handleOps",
    args: [[op], bundler.account.address],
  });
  return { hash, receipt: await publicClient.waitForTransactionReceipt({ hash }) };
}
