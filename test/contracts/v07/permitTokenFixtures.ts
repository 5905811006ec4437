// A local chain with the real EntryPoint v0.7, v0.8 or v0.9, the USDC-like PermitTestToken, a fixed-price aggregator
// and our PermitTokenPaymasterV07 funded and staked by its owner; and the steps of an operation that pays in that token
// with no approve anywhere: the sender's owner signs a permit, the service signs paymasterAndData carrying it, the
// account signs last. Two kinds of sender: a contract account that answers ERC-1271 (Erc1271TestAccount, deployed by
// the operation's initCode) and, from v0.8, an EOA delegated with EIP-7702 to the version's Simple7702Account.
import {
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  parseAbi,
  parseEther,
  parseEventLogs,
  type SignedAuthorization,
  type TransactionReceipt,
} from "viem";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";
import { erc1271TestAccountFactoryAbi } from "../../../contracts/artifacts/Erc1271TestAccountFactory.abi";
import erc1271TestAccountFactoryJson from "../../../contracts/artifacts/Erc1271TestAccountFactory.json" with {
  type: "json",
};
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import { PAYMASTER_SIGNATURE_PLACEHOLDER } from "../../../src/bindings/entryPoints/entryPointV09";
import type { PackedUserOperation } from "../../../src/bindings/entryPoints/packedUserOperation";
import type { Artifact } from "../../../src/bindings/paymasters/artifacts";
import { loadOwnArtifact } from "../../../src/bindings/paymasters/ownArtifact";
import {
  type CarriedPermit,
  encodePermitTokenPaymasterAndData,
  getPermitTokenPaymasterHash,
  PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
  type PermitTokenTerms,
} from "../../../src/bindings/paymasters/permitTokenPaymasterAndData";
import { permitTypedData } from "../../../src/bindings/paymasters/permitTypedData";
import {
  fixedPriceAggregatorArtifact,
  permitTestTokenArtifact,
  permitTokenPaymasterV07Artifact,
} from "../../../src/bindings/paymasters/tokenArtifacts";
import { type GasLimitsV07, maxTokenCostV07 } from "../../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import { create2Address } from "../../../src/chain/create2";
import { type Create2Deployment, paymasterDeployment } from "../../../src/devChain/deployments";
import { entryPointStack, simple7702AccountDeployment } from "../../../src/devChain/entryPointV07Deployments";
import { entryPointV09Stack } from "../../../src/devChain/entryPointV09Deployments";
import { deployCreate2Batch } from "../../../src/devChain/localBatch";
import { createSigner, type Signer } from "../../../src/signer/signer";
import { anvilKeys, type LocalChain, revertOf, startLocalChain } from "../fixtures";
import { type DraftV07, draftPackedOperation, MARKUP, mintTokens, PRICE, RATE, signedRateTerms } from "./tokenFixtures";

export type PermitVersion = "0.7" | "0.8" | "0.9";

/** TokenPaymasterV07's figures: 3,000 tokens (6 decimals) per ether, signed and from the aggregator; 10 % markup. */
export { MARKUP, RATE, TOKENS } from "./tokenFixtures";

/** The local token's domain as USDC has it on Base: a name, version "2". */
const TOKEN = { name: "Test USD Coin", symbol: "TUSDC", version: "2" } as const;
const PAYMASTER_DEPOSIT = parseEther("10");
const STAKE = { amount: parseEther("1"), unstakeDelaySec: 86_400 } as const;

const erc1271TestAccountFactoryArtifact = loadOwnArtifact(
  erc1271TestAccountFactoryJson,
  "Erc1271TestAccountFactory",
  erc1271TestAccountFactoryAbi,
);

export interface PermitTokenChain extends LocalChain {
  version: PermitVersion;
  entryPoint: Address;
  paymaster: Address;
  token: Address;
  aggregator: Address;
  accountFactory: Address;
  /** v0.8 and v0.9: the implementation an EOA delegates to. */
  simple7702Account?: Address;
  serviceSigner: Signer;
}

function withArgs(name: string, artifact: Artifact, types: string[], args: readonly unknown[]): Create2Deployment {
  const initCode = concat([
    artifact.bytecode,
    encodeAbiParameters(
      types.map((type) => ({ type })),
      args,
    ),
  ]);
  return { name, initCode, address: create2Address(initCode) };
}

/** The EntryPoint stack of `version` (v0.8 and v0.9 with Simple7702Account), through the CREATE2 deployer. */
function entryPointDeployments(version: PermitVersion): Record<string, Create2Deployment> {
  if (version === "0.9") {
    const { entryPoint, simple7702Account } = entryPointV09Stack();
    return { entryPoint, simple7702Account };
  }
  const { entryPoint } = entryPointStack(version);
  return version === "0.8" ? { entryPoint, simple7702Account: simple7702AccountDeployment() } : { entryPoint };
}

export async function startPermitTokenChain(version: PermitVersion): Promise<PermitTokenChain> {
  const local = await startLocalChain({ args: ["--hardfork", "prague"] });
  try {
    const owner = local.wallet(anvilKeys.owner);
    const stack = entryPointDeployments(version);
    const entryPoint = (stack.entryPoint as Create2Deployment).address;
    const deployed = await deployCreate2Batch(local.clients(anvilKeys.owner), {
      ...stack,
      paymaster: paymasterDeployment("PermitTokenPaymasterV07", permitTokenPaymasterV07Artifact, {
        entryPoint,
        owner: owner.account.address,
      }),
      token: withArgs(
        "PermitTestToken",
        permitTestTokenArtifact,
        ["string", "string", "string"],
        [TOKEN.name, TOKEN.symbol, TOKEN.version],
      ),
      aggregator: withArgs(
        "FixedPriceAggregator",
        fixedPriceAggregatorArtifact,
        ["address", "uint8", "string", "int256"],
        [owner.account.address, PRICE.decimals, "ETH / TUSDC", PRICE.answer],
      ),
      accountFactory: withArgs(
        "Erc1271TestAccountFactory",
        erc1271TestAccountFactoryArtifact,
        ["address"],
        [entryPoint],
      ),
    });
    const serviceSigner = createSigner(generatePrivateKey());
    const paymaster = deployed.paymaster.address;
    await stakeAndFund(local, paymaster, serviceSigner.address);
    return {
      ...local,
      version,
      entryPoint,
      paymaster,
      token: deployed.token.address,
      aggregator: deployed.aggregator.address,
      accountFactory: deployed.accountFactory.address,
      ...(stack.simple7702Account ? { simple7702Account: stack.simple7702Account.address } : {}),
      serviceSigner,
    };
  } catch (error) {
    await local.anvil.stop();
    throw error;
  }
}

/** The owner adds the service's key, funds the EntryPoint deposit that pays the gas, and stakes (ERC-7562). */
export async function stakeAndFund(env: LocalChain, paymaster: Address, signer: Address): Promise<void> {
  const owner = env.wallet(anvilKeys.owner);
  const contract = { address: paymaster, abi: permitTokenPaymasterV07Artifact.abi } as const;
  for (const hash of [
    await owner.writeContract({ ...contract, functionName: "addSigner", args: [signer] }),
    await owner.writeContract({ ...contract, functionName: "deposit", value: PAYMASTER_DEPOSIT }),
    await owner.writeContract({
      ...contract,
      functionName: "addStake",
      args: [STAKE.unstakeDelaySec],
      value: STAKE.amount,
    }),
  ]) {
    await env.publicClient.waitForTransactionReceipt({ hash });
  }
}

/** Who sends the operation: its address, the key that signs for it, and how it comes to exist. */
export interface Sender {
  address: Address;
  owner: PrivateKeyAccount;
  kind: "erc1271" | "eip7702";
  /** The Erc1271TestAccount's factory call until it is deployed; none for an EOA. */
  initCode: Hex;
  /** EIP-7702: the delegation the bundle transaction carries. */
  authorization?: SignedAuthorization;
}

/** A fresh contract account (deployed by its first operation), holding `mint` tokens and no ether. */
export async function erc1271Sender(env: PermitTokenChain, mint: bigint): Promise<Sender> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const factory = { address: env.accountFactory, abi: erc1271TestAccountFactoryAbi } as const;
  const address = await env.publicClient.readContract({
    ...factory,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  if (mint > 0n) await mintTokens(env, address, mint);
  const initCode = concat([
    env.accountFactory,
    encodeFunctionData({ abi: erc1271TestAccountFactoryAbi, functionName: "createAccount", args: [owner.address, 0n] }),
  ]);
  return { address, owner, kind: "erc1271", initCode };
}

/** A fresh EOA that delegates to Simple7702Account in the bundle's transaction, holding `mint` tokens and no ether. */
export async function eip7702Sender(env: PermitTokenChain, mint: bigint): Promise<Sender> {
  if (env.simple7702Account === undefined) throw new Error(`EntryPoint v${env.version} has no Simple7702Account`);
  const owner = privateKeyToAccount(generatePrivateKey());
  if (mint > 0n) await mintTokens(env, owner.address, mint);
  const authorization = await owner.signAuthorization({
    address: env.simple7702Account,
    chainId: env.anvil.chainId,
    nonce: 0,
  });
  return { address: owner.address, owner, kind: "eip7702", initCode: "0x", authorization };
}

const erc20 = parseAbi([
  "function transfer(address to, uint256 amount) returns (bool)",
  "function approve(address spender, uint256 amount) returns (bool)",
]);
/** Erc1271TestAccount and Simple7702Account both take BaseAccount's execute(target, value, data). */
const accountAbi = parseAbi(["function execute(address target, uint256 value, bytes data)"]);

export function executeCall(target: Address, data: Hex = "0x"): Hex {
  return encodeFunctionData({ abi: accountAbi, functionName: "execute", args: [target, 0n, data] });
}

export function transferCall(env: PermitTokenChain, to: Address, amount: bigint): Hex {
  return executeCall(env.token, encodeFunctionData({ abi: erc20, functionName: "transfer", args: [to, amount] }));
}

/**
 * The five limits of a first operation. The paymaster's two are what the service signs for this contract; the rest
 * are generous (the account's deployment included), which only raises the prefund, and so the refund.
 */
export const permitGasLimits: Readonly<Omit<GasLimitsV07, "maxFeePerGas">> = {
  verificationGasLimit: 600_000n,
  callGasLimit: 100_000n,
  preVerificationGas: 50_000n,
  paymasterVerificationGasLimit: PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
  paymasterPostOpGasLimit: PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
};

export type Draft = Pick<DraftV07, "op" | "limits">;

export async function draftOperation(
  env: PermitTokenChain,
  sender: Sender,
  callData: Hex,
  limits: Partial<typeof permitGasLimits> = {},
): Promise<Draft> {
  const deployed =
    sender.kind === "erc1271" && ((await env.publicClient.getCode({ address: sender.address })) ?? "0x") !== "0x";
  const initCode = deployed ? "0x" : sender.initCode;
  return draftPackedOperation(env, { sender: sender.address, initCode, callData }, { ...permitGasLimits, ...limits });
}

/** The most the operation can cost in tokens at the signed rate: the prefund validation takes. */
export function maxCharge(draft: Draft): bigint {
  return maxTokenCostV07(draft.limits, RATE, MARKUP);
}

/** The token's domain as the chain gives it (EIP-5267), and the permit of `value` the sender's owner signs. */
export async function signPermit(
  env: PermitTokenChain,
  sender: Sender,
  value: bigint,
  overrides: { spender?: Address; nonce?: bigint } = {},
): Promise<CarriedPermit> {
  const token = { address: env.token, abi: permitTestTokenArtifact.abi } as const;
  const [[, name, version, chainId, verifyingContract], nonce] = await Promise.all([
    env.publicClient.readContract({ ...token, functionName: "eip712Domain" }),
    env.publicClient.readContract({ ...token, functionName: "nonces", args: [sender.address] }),
  ]);
  const typedData = permitTypedData(
    { name, version, chainId, verifyingContract },
    { owner: sender.address, spender: overrides.spender ?? env.paymaster, value, nonce: overrides.nonce ?? nonce },
  );
  return { value, signature: await sender.owner.signTypedData(typedData) };
}

export interface Terms extends PermitTokenTerms {
  /** v0.9: sign the userOpHash apart (parallel signing) instead of getHash in paymasterData. */
  parallel?: boolean;
}

/** Terms the service would sign: the signed rate, valid from a minute ago to five minutes ahead of the chain. */
export async function terms(env: PermitTokenChain, overrides: Partial<Terms> = {}): Promise<Terms> {
  return { ...(await signedRateTerms(env)), ...overrides };
}

/**
 * The service's part and then the account's, in the order each version needs. Sequential: the service signs getHash
 * into paymasterData, then the account signs the userOpHash (which covers it). Parallel (v0.9): the operation carries
 * a placeholder paymasterSignature, the account signs the userOpHash (which leaves it out), and the service's
 * signature of that same hash replaces the placeholder.
 */
export async function signOperation(
  env: PermitTokenChain,
  sender: Sender,
  draft: Draft,
  quote: Terms,
  signer: Signer = env.serviceSigner,
  paymaster: Address = env.paymaster,
): Promise<PackedUserOperation> {
  const context = { ...quote, ...draft.limits, chainId: env.anvil.chainId, paymaster };
  if (!quote.parallel) {
    const signature = await signer.signHash(getPermitTokenPaymasterHash(draft.op, context));
    const op = { ...draft.op, paymasterAndData: encodePermitTokenPaymasterAndData({ ...context, signature }) };
    return signByAccount(env, sender, op);
  }
  const placed = (paymasterSignature: Hex) =>
    encodePermitTokenPaymasterAndData({ ...context, signature: "0x", paymasterSignature });
  const signed = await signByAccount(env, sender, {
    ...draft.op,
    paymasterAndData: placed(PAYMASTER_SIGNATURE_PLACEHOLDER),
  });
  const paymasterSignature = await signer.signHash(await userOpHashOf(env, signed));
  return { ...signed, paymasterAndData: placed(paymasterSignature) };
}

export function userOpHashOf(env: PermitTokenChain, op: PackedUserOperation): Promise<Hex> {
  return env.publicClient.readContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "getUserOpHash",
    args: [op],
  });
}

/**
 * The account's signature over the userOpHash: Erc1271TestAccount checks EIP-191, Simple7702Account (v0.8 and v0.9)
 * the raw hash (already EIP-712 typed data there).
 */
export async function signByAccount(
  env: PermitTokenChain,
  sender: Sender,
  op: PackedUserOperation,
): Promise<PackedUserOperation> {
  const userOpHash = await userOpHashOf(env, op);
  const signature =
    sender.kind === "erc1271"
      ? await sender.owner.signMessage({ message: { raw: userOpHash } })
      : await sender.owner.sign({ hash: userOpHash });
  return { ...op, signature };
}

function authorizations(senders: readonly Sender[]): SignedAuthorization[] {
  return senders.flatMap((sender) => (sender.authorization ? [sender.authorization] : []));
}

/** Runs handleOps as a bundler would, with the senders' delegations; throws if the EntryPoint reverts the bundle. */
export async function handleOps(
  env: PermitTokenChain,
  ops: PackedUserOperation[],
  senders: readonly Sender[] = [],
): Promise<TransactionReceipt> {
  const list = authorizations(senders);
  const hash = await env.wallet(anvilKeys.bundler).writeContract({
    address: env.entryPoint,
    abi: entryPointV07Abi,
    functionName: "handleOps",
    args: [ops, privateKeyToAccount(anvilKeys.bundler).address],
    ...(list.length > 0 ? { authorizationList: list } : {}),
  });
  return env.publicClient.waitForTransactionReceipt({ hash });
}

/** The EntryPoint's FailedOp / FailedOpWithRevert for a bundle, from handleOps through eth_call. */
export function failedOp(env: PermitTokenChain, ops: PackedUserOperation[], senders: readonly Sender[] = []) {
  const bundler = privateKeyToAccount(anvilKeys.bundler).address;
  const list = authorizations(senders);
  return revertOf(
    env.publicClient.simulateContract({
      address: env.entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [ops, bundler],
      account: bundler,
      ...(list.length > 0 ? { authorizationList: list } : {}),
    }),
  );
}

export async function tokenBalance(env: PermitTokenChain, owner: Address): Promise<bigint> {
  return env.publicClient.readContract({
    address: env.token,
    abi: permitTestTokenArtifact.abi,
    functionName: "balanceOf",
    args: [owner],
  });
}

/** The paymaster's TokenCharged events of a receipt, and the EntryPoint's UserOperationEvents. */
export function eventsOf(receipt: TransactionReceipt) {
  return {
    charged: parseEventLogs({
      abi: permitTokenPaymasterV07Artifact.abi,
      logs: receipt.logs,
      eventName: "TokenCharged",
    }).map((event) => event.args),
    operations: parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" }),
  };
}
