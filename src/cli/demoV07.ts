// `npm run demo`, EntryPoint v0.7 and v0.8 part: a SimpleAccount 0.7 whose first operation deploys it, then an EOA
// that delegates to Simple7702Account with EIP-7702 and sends an operation on v0.8, both sponsored through ERC-7677
// (pm_getPaymasterStubData, then pm_getPaymasterData) and sent with handleOps as a bundler would. The wallet's side of
// docs/sponsorship-rpc.md, 'EntryPoint v0.7 and v0.8', with viem and our own operation helpers only: the demo ships in
// the build, which has no development packages.
import {
  type Account,
  type Address,
  type Chain,
  encodeFunctionData,
  formatEther,
  type Hex,
  isAddressEqual,
  numberToHex,
  type PublicClient,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  type Transport,
  type WalletClient,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../bindings/entryPoints/entryPointV07";
import {
  type EntryPointVersionV07,
  eip7702AuthOf,
  getUserOpHashV07,
  packUserOperation,
  toRpcUserOperationV07,
  type UserOperationV07,
} from "../bindings/entryPoints/userOperationV07";
import { verifyingPaymasterV07Artifact } from "../bindings/paymasters/artifacts";
import type { LocalEntryPointStack } from "../chain/localAddresses";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../devChain/simpleAccount";
import { demoRpc } from "./demoRpc";

/** What the funding wallet deposits in each later version's paymaster: those keep their own balances. */
const DEPOSIT = parseEther("0.1");
/**
 * The demo has no bundler to estimate with, so it chooses the account's validation limits and preVerificationGas
 * itself. Unused validation gas costs nothing (the EntryPoint charges what was used); preVerificationGas is paid in
 * full, so it is near what bundlers ask for one operation in a bundle of one on a chain without an L1 fee.
 */
const VERIFICATION_GAS = { deploy: 400_000n, delegated: 100_000n } as const;
const PRE_VERIFICATION_GAS = 50_000n;

export interface LaterEntryPointDemoContext {
  baseUrl: string;
  chainId: number;
  apiKey: string;
  /** The local chain's v0.7 and v0.8 stacks (local-chain.json). */
  stacks: Record<EntryPointVersionV07, LocalEntryPointStack>;
  publicClient: PublicClient;
  /** Sends handleOps, as a bundler would. */
  bundler: WalletClient<Transport, Chain, Account>;
  /** The dApp's funding wallet, whose deposit in each version's paymaster pays. */
  fundingWallet: WalletClient<Transport, Chain, Account>;
  /** Whitelists a contract's methods for the dApp through the management API. */
  whitelist(name: string, address: Address, methods: string[]): Promise<void>;
  /** The number of the first step printed. */
  firstStep: number;
  step(n: number, text: string): void;
  detail(text: string): void;
}

interface PaymasterFields {
  paymaster: Address;
  paymasterData: Hex;
  paymasterVerificationGasLimit: Hex;
  paymasterPostOpGasLimit: Hex;
}

const eth = (wei: bigint) => `${formatEther(wei)} ETH`;

const rpc = <T>(context: LaterEntryPointDemoContext, method: string, params: unknown[]): Promise<T> =>
  demoRpc<T>(context, method, params);

/** Runs the v0.7 and the two EIP-7702 operations (v0.8, v0.9), printing each step; returns the next step's number. */
export async function runLaterEntryPointDemo(context: LaterEntryPointDemoContext): Promise<number> {
  const { publicClient, fundingWallet, stacks, step, detail } = context;
  let n = context.firstStep;
  const factory = stacks["0.7"].simpleAccountFactory;

  for (const version of ["0.7", "0.8", "0.9"] as const) {
    // depositFor reads alike in VerifyingPaymasterV07 and VerifyingPaymasterV09.
    const hash = await fundingWallet.writeContract({
      address: stacks[version].verifyingPaymaster,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "depositFor",
      args: [fundingWallet.account.address],
      value: DEPOSIT,
    });
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`depositFor on the v${version} paymaster reverted: ${hash}`);
  }
  step(
    n++,
    `depositFor: ${eth(DEPOSIT)} each into VerifyingPaymasterV07 of EntryPoint v0.7 ` +
      `${stacks["0.7"].verifyingPaymaster}, of v0.8 ${stacks["0.8"].verifyingPaymaster} and VerifyingPaymasterV09 ` +
      `of v0.9 ${stacks["0.9"].verifyingPaymaster}`,
  );
  await context.whitelist("SimpleAccountFactory v0.7", factory, ["createAccount"]);
  step(n++, `Whitelisted SimpleAccountFactory v0.7 ${factory}, method createAccount: both operations call it`);

  // (a) SimpleAccount 0.7: the factory deploys it in the first operation, whose call has the factory create a second
  // account for another owner.
  const owner = privateKeyToAccount(generatePrivateKey());
  const sender = await accountAddress(publicClient, factory, owner.address);
  const v07 = await sponsorAndMine(context, n, {
    version: "0.7",
    sender,
    factory,
    factoryData: encodeFunctionData({
      abi: simpleAccountFactoryAbi,
      functionName: "createAccount",
      args: [owner.address, 0n],
    }),
    verificationGasLimit: VERIFICATION_GAS.deploy,
    // SimpleAccount 0.7 checks an EIP-191 signature of the userOpHash.
    sign: (hash) => owner.signMessage({ message: { raw: hash } }),
    title: `SimpleAccount 0.7 ${sender} (owner ${owner.address}), not deployed yet`,
  });
  n = v07.next;
  detail(`smart account ${sender} deployed: ${await deployed(publicClient, sender)}`);

  // (b) EIP-7702 on v0.8: a new EOA signs an authorization for Simple7702Account; the handleOps transaction carries it,
  // so the EOA has the account's code when the EntryPoint validates its operation.
  const eoa = privateKeyToAccount(generatePrivateKey());
  const implementation = stacks["0.8"].simple7702Account;
  if (!implementation) throw new Error("local-chain.json names no Simple7702Account for EntryPoint v0.8");
  const authorization = await eoa.signAuthorization({ address: implementation, chainId: context.chainId, nonce: 0 });
  const v08 = await sponsorAndMine(context, n, {
    version: "0.8",
    sender: eoa.address,
    factory: "0x7702",
    factoryData: "0x",
    authorization,
    verificationGasLimit: VERIFICATION_GAS.delegated,
    // Simple7702Account (like every 0.8 account) checks a plain signature of the EIP-712 userOpHash.
    sign: (hash) => eoa.sign({ hash }),
    title: `EOA ${eoa.address} (no ether, no code) authorizes Simple7702Account ${implementation} (EIP-7702)`,
  });
  const code = await publicClient.getCode({ address: eoa.address });
  detail(`the EOA's code is now ${code} (0xef0100 ++ the delegate's address)`);

  // (c) EntryPoint v0.9: the same EIP-7702 flow with its own Simple7702Account; the ERC-7677 steps sign sequentially
  // (the signature inside paymasterData), which our VerifyingPaymasterV09 accepts beside the v0.9 suffix.
  const eoa09 = privateKeyToAccount(generatePrivateKey());
  const implementation09 = stacks["0.9"].simple7702Account;
  if (!implementation09) throw new Error("local-chain.json names no Simple7702Account for EntryPoint v0.9");
  const authorization09 = await eoa09.signAuthorization({
    address: implementation09,
    chainId: context.chainId,
    nonce: 0,
  });
  const v09 = await sponsorAndMine(context, v08.next, {
    version: "0.9",
    sender: eoa09.address,
    factory: "0x7702",
    factoryData: "0x",
    authorization: authorization09,
    verificationGasLimit: VERIFICATION_GAS.delegated,
    sign: (hash) => eoa09.sign({ hash }),
    title: `EOA ${eoa09.address} authorizes Simple7702Account v0.9 ${implementation09} (EIP-7702)`,
  });
  return v09.next;
}

interface LaterOperation {
  version: EntryPointVersionV07;
  sender: Address;
  factory: Address | Hex;
  factoryData: Hex;
  authorization?: SignedAuthorization;
  verificationGasLimit: bigint;
  sign(userOpHash: Hex): Promise<Hex>;
  title: string;
}

/** One operation: the ERC-7677 stub and data, the owner's signature, handleOps; prints each and checks the event. */
async function sponsorAndMine(
  context: LaterEntryPointDemoContext,
  first: number,
  spec: LaterOperation,
): Promise<{ next: number }> {
  const { publicClient, bundler, stacks, step, detail } = context;
  let n = first;
  const { entryPoint, verifyingPaymaster } = stacks[spec.version];
  const factory = stacks["0.7"].simpleAccountFactory;
  const otherOwner = privateKeyToAccount(generatePrivateKey()).address;
  const call = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: "createAccount",
    args: [otherOwner, 0n],
  });
  // The call's gas, measured as a transaction from the sender: its 21,000 base more than covers execute's own work.
  const callGasLimit = await publicClient.estimateGas({ account: spec.sender, to: factory, data: call });
  const fees = await publicClient.estimateFeesPerGas();
  const op: UserOperationV07 = {
    sender: spec.sender,
    nonce: 0n,
    factory: spec.factory,
    factoryData: spec.factoryData,
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [factory, 0n, call] }),
    callGasLimit,
    verificationGasLimit: spec.verificationGasLimit,
    preVerificationGas: PRE_VERIFICATION_GAS,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    signature: "0x",
    ...(spec.authorization && { eip7702Auth: eip7702AuthOf(spec.authorization) }),
  };
  const params = (o: UserOperationV07) => [toRpcUserOperationV07(o), entryPoint, numberToHex(context.chainId)];
  step(n++, `EntryPoint v${spec.version} ${entryPoint}: ${spec.title}`);

  const stub = await rpc<PaymasterFields & { isFinal: boolean }>(context, "pm_getPaymasterStubData", params(op));
  detail(
    `pm_getPaymasterStubData: paymaster ${stub.paymaster}, paymasterVerificationGasLimit ` +
      `${BigInt(stub.paymasterVerificationGasLimit)}, paymasterPostOpGasLimit ${BigInt(stub.paymasterPostOpGasLimit)}`,
  );
  const withStub = { ...op, ...paymasterFields(stub) };
  const data = await rpc<PaymasterFields>(context, "pm_getPaymasterData", params(withStub));
  const unsigned = { ...withStub, ...paymasterFields(data) };
  detail(
    `pm_getPaymasterData: paymasterData ${(data.paymasterData.length - 2) / 2} bytes, signed over callGasLimit ` +
      `${op.callGasLimit}, verificationGasLimit ${op.verificationGasLimit}, preVerificationGas ` +
      `${op.preVerificationGas}, maxFeePerGas ${op.maxFeePerGas}`,
  );
  if (!isAddressEqual(data.paymaster, verifyingPaymaster)) {
    throw new Error(`pm_getPaymasterData named paymaster ${data.paymaster}, not ${verifyingPaymaster}`);
  }

  const userOpHash = getUserOpHashV07(unsigned, entryPoint, context.chainId, spec.version);
  const signed = { ...unsigned, signature: await spec.sign(userOpHash) };
  const deposit = () =>
    publicClient.readContract({
      address: verifyingPaymaster,
      abi: verifyingPaymasterV07Artifact.abi,
      functionName: "getBalance",
      args: [context.fundingWallet.account.address],
    });
  const depositBefore = await deposit();
  const hash = await bundler.writeContract({
    address: entryPoint,
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [[packUserOperation(signed)], bundler.account.address],
    // A type-4 transaction: the authorization sets the EOA's code before the EntryPoint runs.
    ...(spec.authorization && { authorizationList: [spec.authorization] }),
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  step(n++, `Signed by the owner (userOpHash ${userOpHash}), handleOps sent by ${bundler.account.address}`);
  detail(
    `transaction ${hash} (type ${receipt.type}): ${receipt.status} in block ${receipt.blockNumber}, gas used ` +
      `${receipt.gasUsed}`,
  );
  if (receipt.status !== "success") throw new Error(`handleOps on EntryPoint v${spec.version} reverted: ${hash}`);
  const event = parseEventLogs({ abi: entryPointV07Abi, eventName: "UserOperationEvent", logs: receipt.logs }).find(
    (e) => isAddressEqual(e.address, entryPoint) && e.args.userOpHash === userOpHash,
  );
  if (!event) throw new Error(`no UserOperationEvent of EntryPoint v${spec.version} for ${userOpHash} in ${hash}`);
  const depositAfter = await deposit();
  detail(
    `UserOperationEvent success: ${event.args.success}, EntryPoint v${spec.version}, paymaster ${event.args.paymaster}, ` +
      `actualGasCost ${eth(event.args.actualGasCost)}, actualGasUsed ${event.args.actualGasUsed}`,
  );
  detail(
    `the dApp's deposit in the v${spec.version} paymaster: ${eth(depositBefore)} -> ${eth(depositAfter)} ` +
      `(paid ${eth(depositBefore - depositAfter)})`,
  );
  if (!event.args.success) {
    throw new Error(`the v${spec.version} operation ran but its call reverted (UserOperationEvent success false)`);
  }
  return { next: n };
}

function paymasterFields(fields: PaymasterFields) {
  return {
    paymaster: fields.paymaster,
    paymasterData: fields.paymasterData,
    paymasterVerificationGasLimit: BigInt(fields.paymasterVerificationGasLimit),
    paymasterPostOpGasLimit: BigInt(fields.paymasterPostOpGasLimit),
  };
}

async function accountAddress(publicClient: PublicClient, factory: Address, owner: Address): Promise<Address> {
  return publicClient.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner, 0n],
  });
}

async function deployed(publicClient: PublicClient, address: Address): Promise<boolean> {
  return ((await publicClient.getCode({ address })) ?? "0x") !== "0x";
}
