// A local chain with the real EntryPoint v0.7 or v0.8, a test fee token, a fixed-price aggregator and our
// TokenPaymasterV07 funded through its owner's EntryPoint deposit; and the steps of a token-paid operation as a wallet
// sends it: a SimpleAccount batch that approves the paymaster first, the service's signature, the account's last.
import {
  type Address,
  concat,
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  type Hex,
  isAddressEqual,
  parseAbi,
  parseEther,
  parseGwei,
} from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import {
  type PackedUserOperation,
  packAccountGasLimits,
  packGasFees,
} from "../../../src/bindings/entryPoints/packedUserOperation";
import {
  fixedPriceAggregatorArtifact,
  testTokenArtifact,
  tokenPaymasterV07Artifact,
} from "../../../src/bindings/paymasters/tokenArtifacts";
import { PRICE_SOURCE, type TokenFeeTerms } from "../../../src/bindings/paymasters/tokenPaymasterAndData";
import {
  encodeTokenPaymasterAndDataV07,
  type GasLimitsV07,
  getTokenPaymasterHashV07,
  TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
} from "../../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import type { EntryPointVersion } from "../../../src/devChain/entryPointV07Deployments";
import { simpleAccountFactoryAbi } from "../../../src/devChain/simpleAccount";
import { createSigner, type Signer } from "../../../src/signer/signer";
import type { AnvilOptions } from "../../helpers/anvil";
import { deployEntryPointStack } from "../../helpers/entryPointsV07";
import { anvilKeys, type LocalChain, startLocalChain } from "../fixtures";

/** Six decimals like USDC; 3,000 tokens per ether, signed as the rate and given by the aggregator alike. */
const TOKEN_DECIMALS = 6;
export const RATE = 3_000n * 10n ** 6n;
export const PRICE = { decimals: 8, answer: 3_000n * 10n ** 8n } as const;
export const MARKUP = 1_100_000;
export const TOKENS = (whole: bigint) => whole * 10n ** BigInt(TOKEN_DECIMALS);
export const PAYMASTER_DEPOSIT = parseEther("10");

export interface TokenChainV07 extends LocalChain {
  version: EntryPointVersion;
  entryPoint: Address;
  factory: Address;
  paymaster: Address;
  token: Address;
  aggregator: Address;
  serviceSigner: Signer;
}

async function deploy(env: LocalChain, abi: unknown, bytecode: Hex, args: readonly unknown[]): Promise<Address> {
  const hash = await env.wallet(anvilKeys.owner).deployContract({
    abi: abi as typeof tokenPaymasterV07Artifact.abi,
    bytecode,
    args: args as [Address, Address],
  });
  const { contractAddress } = await env.publicClient.waitForTransactionReceipt({ hash });
  if (!contractAddress) throw new Error("a test contract did not deploy");
  return getAddress(contractAddress);
}

export async function startTokenChainV07(
  version: EntryPointVersion,
  options: AnvilOptions = {},
): Promise<TokenChainV07> {
  const local = await startLocalChain(options);
  try {
    const stack = await deployEntryPointStack(local, anvilKeys.owner, version);
    const owner = local.wallet(anvilKeys.owner);
    const paymaster = await deploy(local, tokenPaymasterV07Artifact.abi, tokenPaymasterV07Artifact.bytecode, [
      stack.entryPoint.address,
      owner.account.address,
    ]);
    const token = await deploy(local, testTokenArtifact.abi, testTokenArtifact.bytecode, [
      "Test USD",
      "TUSD",
      TOKEN_DECIMALS,
    ]);
    const aggregator = await deploy(local, fixedPriceAggregatorArtifact.abi, fixedPriceAggregatorArtifact.bytecode, [
      owner.account.address,
      PRICE.decimals,
      "ETH / TUSD",
      PRICE.answer,
    ]);
    const serviceSigner = createSigner(generatePrivateKey());
    const contract = { address: paymaster, abi: tokenPaymasterV07Artifact.abi } as const;
    for (const hash of [
      await owner.writeContract({ ...contract, functionName: "addSigner", args: [serviceSigner.address] }),
      await owner.writeContract({ ...contract, functionName: "deposit", value: PAYMASTER_DEPOSIT }),
    ]) {
      await local.publicClient.waitForTransactionReceipt({ hash });
    }
    return {
      ...local,
      version,
      entryPoint: stack.entryPoint.address,
      factory: stack.simpleAccountFactory.address,
      paymaster,
      token,
      aggregator,
      serviceSigner,
    };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

/** The five limits of a first operation (it deploys its account); the paymaster's are the ones the service signs. */
export const tokenGasLimits: Readonly<Omit<GasLimitsV07, "maxFeePerGas">> = {
  verificationGasLimit: 500_000n,
  callGasLimit: 150_000n,
  preVerificationGas: 50_000n,
  paymasterVerificationGasLimit: TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
  paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
};

export interface Call {
  to: Address;
  data: Hex;
}

const erc20 = parseAbi([
  "function approve(address spender, uint256 amount) returns (bool)",
  "function transfer(address to, uint256 amount) returns (bool)",
]);
const batchV07 = parseAbi(["function executeBatch(address[] dest, uint256[] value, bytes[] func)"]);
const batchV08 = parseAbi(["function executeBatch((address target, uint256 value, bytes data)[] calls)"]);

export function approveCall(env: TokenChainV07, amount: bigint, spender: Address = env.paymaster): Call {
  return { to: env.token, data: encodeFunctionData({ abi: erc20, functionName: "approve", args: [spender, amount] }) };
}

export function transferCall(env: TokenChainV07, to: Address, amount: bigint): Call {
  return { to: env.token, data: encodeFunctionData({ abi: erc20, functionName: "transfer", args: [to, amount] }) };
}

/** SimpleAccount 0.7 batches three arrays; 0.8 (BaseAccount) one array of calls. */
function batchCallData(version: EntryPointVersion, calls: Call[]): Hex {
  if (version === "0.7") {
    return encodeFunctionData({
      abi: batchV07,
      functionName: "executeBatch",
      args: [calls.map((call) => call.to), calls.map(() => 0n), calls.map((call) => call.data)],
    });
  }
  return encodeFunctionData({
    abi: batchV08,
    functionName: "executeBatch",
    args: [calls.map((call) => ({ target: call.to, value: 0n, data: call.data }))],
  });
}

/** A SimpleAccount owner and its counterfactual address; its first operation deploys it through initCode. */
export interface TestAccount {
  owner: PrivateKeyAccount;
  address: Address;
}

export async function newAccount(env: TokenChainV07, mint: bigint): Promise<TestAccount> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const address = await env.publicClient.readContract({
    address: env.factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  if (mint > 0n) await mintTokens(env, address, mint);
  return { owner, address };
}

/** Any of the local test tokens: each has TestToken's open mint(address,uint256). */
export async function mintTokens(
  env: Pick<TokenChainV07, "wallet" | "token" | "publicClient">,
  to: Address,
  amount: bigint,
): Promise<void> {
  const hash = await env.wallet(anvilKeys.owner).writeContract({
    address: env.token,
    abi: testTokenArtifact.abi,
    functionName: "mint",
    args: [to, amount],
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
}

/** An operation of `account` running `calls` as one batch, gas fields filled in, unsigned. */
export interface DraftV07 {
  op: PackedUserOperation;
  limits: GasLimitsV07;
  maxPriorityFeePerGas: bigint;
}

export async function draftOperation(
  env: TokenChainV07,
  account: TestAccount,
  calls: Call[],
  limits: Partial<typeof tokenGasLimits> = {},
): Promise<DraftV07> {
  const deployed = (await env.publicClient.getCode({ address: account.address })) ?? "0x";
  const initCode =
    deployed === "0x"
      ? concat([
          env.factory,
          encodeFunctionData({
            abi: simpleAccountFactoryAbi,
            functionName: "createAccount",
            args: [account.owner.address, 0n],
          }),
        ])
      : "0x";
  const callData = batchCallData(env.version, calls);
  return draftPackedOperation(env, { sender: account.address, initCode, callData }, { ...tokenGasLimits, ...limits });
}

/**
 * An unsigned packed operation with the sender's next nonce and fees from the latest block, its gas limits kept apart
 * for the tests' arithmetic; the paymaster's two limits go into paymasterAndData later.
 */
export async function draftPackedOperation(
  env: Pick<TokenChainV07, "publicClient" | "entryPoint">,
  fields: Pick<PackedUserOperation, "sender" | "initCode" | "callData">,
  gas: Omit<GasLimitsV07, "maxFeePerGas">,
): Promise<DraftV07> {
  const nonce = await env.publicClient.readContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "getNonce",
    args: [fields.sender, 0n],
  });
  const block = await env.publicClient.getBlock();
  const maxPriorityFeePerGas = parseGwei("1");
  // Above base fee + tip, so the EntryPoint prices gas at base fee + tip and postOp must follow the fee it is given.
  const maxFeePerGas = 2n * (block.baseFeePerGas ?? 0n) + maxPriorityFeePerGas;
  const op: PackedUserOperation = {
    ...fields,
    nonce,
    accountGasLimits: packAccountGasLimits(gas),
    preVerificationGas: gas.preVerificationGas,
    gasFees: packGasFees({ maxPriorityFeePerGas, maxFeePerGas }),
    paymasterAndData: "0x",
    signature: "0x",
  };
  return { op, limits: { ...gas, maxFeePerGas }, maxPriorityFeePerGas };
}

export interface QuoteV07 extends TokenFeeTerms {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  chainId: number;
  signer: Signer;
}

/** Fee terms the service would sign: the signed rate, valid from a minute ago to five minutes ahead of the chain. */
export async function signedRateTerms(env: Pick<TokenChainV07, "publicClient" | "token">): Promise<TokenFeeTerms> {
  const now = Number((await env.publicClient.getBlock()).timestamp);
  return {
    priceSource: PRICE_SOURCE.exchangeRate,
    validUntil: now + 300,
    validAfter: now - 60,
    feeToken: env.token,
    oracleAggregator: "0x0000000000000000000000000000000000000000",
    exchangeRate: RATE,
    priceMarkup: MARKUP,
  };
}

/** signedRateTerms with the paymaster's gas limits and the signer: what the service signs. */
export async function quote(env: TokenChainV07, draft: DraftV07, overrides: Partial<QuoteV07> = {}): Promise<QuoteV07> {
  return {
    ...(await signedRateTerms(env)),
    paymasterVerificationGasLimit: draft.limits.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: draft.limits.paymasterPostOpGasLimit,
    chainId: env.anvil.chainId,
    signer: env.serviceSigner,
    ...overrides,
  };
}

/** What the service does: hash the operation with the terms, sign, and lay out paymasterAndData. */
export async function signByService(
  env: TokenChainV07,
  op: PackedUserOperation,
  terms: QuoteV07,
): Promise<PackedUserOperation> {
  const context = { ...terms, paymaster: env.paymaster };
  const signature = await terms.signer.signHash(getTokenPaymasterHashV07(op, context));
  return { ...op, paymasterAndData: encodeTokenPaymasterAndDataV07({ ...context, signature }) };
}

/** ABI-encoded terms for a raw paymasterAndData that our encoder would refuse to lay out. */
export function rawTermsWords(terms: TokenFeeTerms): Hex {
  return encodeAbiParameters(
    ["uint48", "uint48", "address", "address", "uint256", "uint32"].map((type) => ({ type })),
    [terms.validUntil, terms.validAfter, terms.feeToken, terms.oracleAggregator, terms.exchangeRate, terms.priceMarkup],
  );
}

interface CallFrame {
  to?: string;
  input: string;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/** One call into the paymaster during handleOps, from anvil's geth-style call tracer. */
export type PaymasterCall =
  | { name: "validatePaymasterUserOp"; gasUsed: bigint }
  | { name: "postOp"; gasUsed: bigint; actualGasCost: bigint; feePerGas: bigint; mode: number };

/** The paymaster's hook calls of a transaction, in order, with their gas and postOp's arguments. */
export async function paymasterCalls(env: TokenChainV07, transactionHash: Hex): Promise<PaymasterCall[]> {
  const request = env.publicClient.request as unknown as (args: {
    method: string;
    params: unknown[];
  }) => Promise<CallFrame>;
  const root = await request({ method: "debug_traceTransaction", params: [transactionHash, { tracer: "callTracer" }] });
  const found: PaymasterCall[] = [];
  const walk = (frame: CallFrame) => {
    if (frame.to && isAddressEqual(frame.to as Address, env.paymaster)) {
      const call = decodeFunctionData({ abi: tokenPaymasterV07Artifact.abi, data: frame.input as Hex });
      if (call.functionName === "postOp") {
        const [mode, , actualGasCost, feePerGas] = call.args;
        found.push({ name: "postOp", gasUsed: BigInt(frame.gasUsed), actualGasCost, feePerGas, mode });
      } else if (call.functionName === "validatePaymasterUserOp") {
        found.push({ name: "validatePaymasterUserOp", gasUsed: BigInt(frame.gasUsed) });
      }
    }
    for (const child of frame.calls ?? []) walk(child);
  };
  walk(root);
  return found;
}
