// Sponsored mode end to end: the service listens on a real port, a dApp is set up through the management API, its
// funding wallet deposits real ether in the paymaster on anvil, and an operation the endpoint sponsors is run by the real
// EntryPoint v0.6. Then the same kind of response is shown to fail on chain once anything it covers no longer holds: a
// gas field, the validity window, the chain id.
//
// The tests run in order and share the first one's operation: the later ones go back to the chain's state just before
// that operation ran (an anvil snapshot), so the very response the service gave is what they submit.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type Address,
  concat,
  encodeFunctionData,
  type Hex,
  isAddressEqual,
  parseEther,
  parseEventLogs,
  size,
} from "viem";
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from "viem/accounts";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import { simpleAccountFactoryArtifact, verifyingPaymasterArtifact } from "../../src/bindings/paymasters/artifacts";
import { decodeVerifyingPaymasterAndData } from "../../src/bindings/paymasters/paymasterAndData";
import { LOCAL_VERIFYING_PAYMASTER_ADDRESS, simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { addVerifyingPaymasterSigner, deployLocalStack } from "../../src/devChain/localDeployment";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import { ADMIN_SECRET_HEADER } from "../../src/http/admin";
import { createSigner } from "../../src/signer/signer";
import { listSponsorships } from "../../src/storage/sponsorships";
import {
  anvilKeys,
  failedOpOf,
  handleOps,
  type LocalChain,
  latestTimestamp,
  simulateBundle,
  sponsor,
  startLocalChain,
} from "../contracts/fixtures";
import { startTestApp, type TestApp } from "../helpers/app";
import { freshAccount } from "../helpers/freshAccount";
import { sentUserOpV06 } from "../helpers/userOps";

const AA24 = "AA24 signature error";
const AA32 = "AA32 paymaster expired or not due";
const AA34 = "AA34 signature error";
/** The service's local chain (its configuration defaults the paymaster to LOCAL_VERIFYING_PAYMASTER_ADDRESS there). */
const CHAIN_ID = 31337;
/** Another chain with the same contracts at the same addresses and the same verifying signer. */
const OTHER_CHAIN_ID = 1337;

const serviceKey = generatePrivateKey();
const serviceSigner = createSigner(serviceKey);
const adminSecret = `secret-${generatePrivateKey()}`;
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet);
const factory = simpleAccountFactoryDeployment.address;
const paymaster = { address: LOCAL_VERIFYING_PAYMASTER_ADDRESS, abi: verifyingPaymasterArtifact.abi } as const;
const INFINITISM = { name: "INFINITISM", version: "1.0.0" };
/** Explicit and generous: validation deploys the account, the call deploys another one through the factory. */
const GAS = { callGasLimit: 400_000n, verificationGasLimit: 600_000n, preVerificationGas: 60_000n } as const;
const DEPOSIT = parseEther("1");

let chain: LocalChain | undefined;
let otherChain: LocalChain | undefined;
let service: TestApp | undefined;
let baseUrl: string;
let dapp: { token: string; apiKey: string; paymasterId: string };

/** What the first test leaves for the others: the sponsored, owner-signed operation and the state before it ran. */
let sponsored: { op: UserOperation; owner: LocalAccount; snapshot: Hex } | undefined;

before(async () => {
  // One after the other, so that a failed start leaves nothing unassigned for `after` to miss.
  chain = await startLocalChain({ chainId: CHAIN_ID });
  otherChain = await startLocalChain({ chainId: OTHER_CHAIN_ID });
  await Promise.all([prepareChain(chain), prepareChain(otherChain)]);

  service = await startTestApp({ signer: serviceSigner, adminSecret });
  baseUrl = await service.app.listen({ port: 0, host: "127.0.0.1" });

  // The dApp's whole setup goes through the management API over HTTP, as a dashboard or a script would do it.
  const account = await post<{ authToken: string }>(
    "/internal/accounts",
    { name: "e2e" },
    { [ADMIN_SECRET_HEADER]: adminSecret },
  );
  const token = account.authToken;
  const created = await management<{ apiKey: string; paymasterId: string }>("POST", "paymasterParameters", {
    token,
    body: { name: "e2e-dapp", type: "HYBRID", chainId: CHAIN_ID, version: "1.0.0" },
  });
  dapp = { token, apiKey: created.apiKey, paymasterId: created.paymasterId };
  await linkFundingWallet();
  await management("POST", "paymaster-policy", {
    ...dapp,
    body: { name: "deployments", policyType: "WALLET_DEPLOYMENT", policyData: {} },
  });
  // The factory's real ABI, of which only createAccount is sponsored.
  await management("POST", "smart-contract", {
    ...dapp,
    body: {
      name: "SimpleAccountFactory",
      address: factory,
      abi: JSON.stringify(simpleAccountFactoryArtifact.abi),
      whitelistedMethods: ["createAccount"],
    },
  });
  const [contract] = await management<{ methods: string[]; whitelistedMethods: string[] }[]>(
    "GET",
    "smart-contract",
    dapp,
  );
  assert.deepEqual(contract?.whitelistedMethods, ["createAccount"]);
  assert.ok((contract?.methods.length ?? 0) > 1, "the ABI has methods that stay unsponsored");

  // Real ether from the funding wallet into the dApp's deposit, on both chains, so they differ by their id alone.
  await Promise.all([depositFor(chain, DEPOSIT), depositFor(otherChain, DEPOSIT)]);
});

after(async () => {
  try {
    await service?.close();
  } finally {
    await Promise.all([chain?.anvil.stop(), otherChain?.anvil.stop()]);
  }
});

/** EntryPoint, factory and our paymaster at their deterministic addresses, and the service's key in its signer set. */
async function prepareChain(env: LocalChain): Promise<void> {
  const stack = await deployLocalStack(env.clients(anvilKeys.owner));
  assert.equal(stack.entryPoint.address, ENTRY_POINT_V06_ADDRESS);
  assert.equal(stack.simpleAccountFactory.address, factory);
  assert.equal(stack.verifyingPaymaster.address, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
  await addVerifyingPaymasterSigner(env.clients(anvilKeys.owner), serviceSigner.address);
  const accepted = await env.publicClient.readContract({
    ...paymaster,
    functionName: "isSigner",
    args: [serviceSigner.address],
  });
  assert.equal(accepted, true);
}

async function post<T>(path: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const reply = (await response.json()) as { statusCode: number; data: T };
  assert.equal(response.status, 200, `POST ${path}: ${JSON.stringify(reply)}`);
  return reply.data;
}

/** A management call over HTTP; fails unless it answers 200, and returns the envelope's data. */
async function management<T = unknown>(
  method: string,
  path: string,
  options: { token: string; apiKey?: string; body?: unknown },
): Promise<T> {
  const headers: Record<string, string> = { authToken: options.token };
  if (options.apiKey) headers.apiKey = options.apiKey;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl}${MANAGEMENT_PREFIX}/${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const reply = (await response.json()) as { statusCode: number; message: string; data: T };
  assert.equal(response.status, 200, `${method} ${path}: ${JSON.stringify(reply)}`);
  assert.equal(reply.statusCode, 200);
  return reply.data;
}

/** The three-step flow with a real EIP-191 signature by the anvil key that holds the ether. */
async function linkFundingWallet(): Promise<void> {
  const { fundingMessage } = await management<{ fundingMessage: string }>(
    "GET",
    `funding-message/${dapp.paymasterId}`,
    dapp,
  );
  const signature = await fundingWallet.signMessage({ message: fundingMessage });
  await management("PATCH", "paymasterParameters", {
    ...dapp,
    body: { paymasterId: dapp.paymasterId, type: "paymasterFundingId", signature, address: fundingWallet.address },
  });
}

async function depositFor(env: LocalChain, value: bigint): Promise<void> {
  const hash = await env
    .wallet(anvilKeys.fundingWallet)
    .writeContract({ ...paymaster, functionName: "depositFor", args: [fundingWallet.address], value });
  const receipt = await env.publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, "success");
  assert.equal(await dappBalance(env), value);
}

function dappBalance(env: LocalChain): Promise<bigint> {
  return env.publicClient.readContract({ ...paymaster, functionName: "getBalance", args: [fundingWallet.address] });
}

function requireChain(env: LocalChain | undefined): LocalChain {
  assert.ok(env, "the chains did not start");
  return env;
}

let rpcId = 0;

/** The sponsorship endpoint over real HTTP, with every number as hex as wallets send them. */
async function sponsorOverHttp(op: UserOperation, mode: Record<string, unknown> = {}) {
  const userOp = sentUserOpV06(op);
  const id = ++rpcId;
  const response = await fetch(`${baseUrl}/api/v1/${CHAIN_ID}/${dapp.apiKey}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "pm_sponsorUserOperation",
      params: [
        userOp,
        { mode: "SPONSORED", calculateGasLimits: false, sponsorshipInfo: { smartAccountInfo: INFINITISM }, ...mode },
      ],
    }),
  });
  const body = (await response.json()) as {
    id: number;
    result: {
      mode: string;
      paymasterAndData: Hex;
      callGasLimit: number;
      verificationGasLimit: number;
      preVerificationGas: string;
      reason?: string;
    };
  };
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.id, id);
  return body.result;
}

/** The operation as the service answered: its paymasterAndData and exactly the gas values its signature covers. */
async function sponsoredBy(op: UserOperation, mode: Record<string, unknown> = {}): Promise<UserOperation> {
  const result = await sponsorOverHttp(op, mode);
  assert.equal(result.mode, "SPONSORED");
  assert.equal(result.reason, undefined, `refused: ${result.reason}`);
  assert.equal(size(result.paymasterAndData), 276);
  return {
    ...op,
    paymasterAndData: result.paymasterAndData,
    callGasLimit: BigInt(result.callGasLimit),
    verificationGasLimit: BigInt(result.verificationGasLimit),
    preVerificationGas: BigInt(result.preVerificationGas),
  };
}

/** SimpleAccount v0.6 takes the owner's EIP-191 signature of the userOpHash, which covers paymasterAndData. */
async function signedByOwner(env: LocalChain, op: UserOperation, owner: LocalAccount): Promise<UserOperation> {
  const userOpHash = await env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getUserOpHash",
    args: [op],
  });
  assert.equal(userOpHash, getUserOpHash(op, ENTRY_POINT_V06_ADDRESS, env.anvil.chainId));
  return { ...op, signature: await owner.signMessage({ message: { raw: userOpHash } }) };
}

/** The first operation of a fresh SimpleAccount: initCode deploys it, callData has it call the factory. */
async function firstOperation(env: LocalChain, owner: LocalAccount, salt: bigint, call: Hex): Promise<UserOperation> {
  const sender = await env.publicClient.readContract({
    address: factory,
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, salt],
  });
  const nonce = await env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getNonce",
    args: [sender, 0n],
  });
  const fees = await env.publicClient.estimateFeesPerGas();
  return {
    sender,
    nonce,
    initCode: concat([
      factory,
      encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner.address, salt] }),
    ]),
    callData: encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [factory, 0n, call] }),
    ...GAS,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    paymasterAndData: "0x",
    signature: "0x",
  };
}

async function hasCode(env: LocalChain, address: Address): Promise<boolean> {
  const code = await env.publicClient.getCode({ address });
  return code !== undefined && code !== "0x";
}

/** Back to the chain as it was just before the first test's operation ran (and keep that state for the next test). */
async function beforeExecution(): Promise<{ env: LocalChain; op: UserOperation; owner: LocalAccount }> {
  assert.ok(sponsored, "the end-to-end test must run first");
  const env = requireChain(chain);
  await env.testClient.revert({ id: sponsored.snapshot });
  sponsored.snapshot = await env.testClient.snapshot();
  assert.equal(await hasCode(env, sponsored.op.sender), false);
  return { env, op: sponsored.op, owner: sponsored.owner };
}

test("an operation sponsored over HTTP deploys the account, runs the whitelisted call and is paid from the deposit", async (t) => {
  const env = requireChain(chain);
  const owner = privateKeyToAccount(generatePrivateKey());
  const salt = 7n;
  // The whitelisted method's observable effect: another account, for another owner, exists afterwards.
  const { owner: otherOwner, sender: created, factoryData: call } = await freshAccount(env.publicClient, factory);
  const unsigned = await firstOperation(env, owner, salt, call);
  assert.equal(unsigned.nonce, 0n);
  assert.equal(await hasCode(env, unsigned.sender), false);
  assert.equal(await hasCode(env, created), false);

  const requestedAt = Math.floor(Date.now() / 1000);
  const op = await signedByOwner(env, await sponsoredBy(unsigned), owner);
  // The service signed over exactly the gas values it was sent (calculateGasLimits: false).
  assert.equal(op.callGasLimit, GAS.callGasLimit);
  assert.equal(op.verificationGasLimit, GAS.verificationGasLimit);
  assert.equal(op.preVerificationGas, GAS.preVerificationGas);
  const terms = decodeVerifyingPaymasterAndData(op.paymasterAndData);
  assert.equal(terms.paymaster, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
  assert.ok(isAddressEqual(terms.paymasterId, fundingWallet.address), "the funding wallet is the on-chain paymasterId");
  assert.ok(terms.validUntil >= requestedAt + 300 && terms.validUntil <= requestedAt + 302, "default expiry 300 s");

  sponsored = { op, owner, snapshot: await env.testClient.snapshot() };
  const depositBefore = await dappBalance(env);
  const entryPointDepositBefore = await env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "balanceOf",
    args: [LOCAL_VERIFYING_PAYMASTER_ADDRESS],
  });

  const receipt = await handleOps(env, [op]);
  assert.equal(receipt.status, "success");
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event, "no UserOperationEvent");
  assert.equal(event.args.success, true);
  assert.equal(event.args.sender, op.sender);
  assert.equal(event.args.paymaster, LOCAL_VERIFYING_PAYMASTER_ADDRESS);
  assert.equal(event.args.nonce, 0n);
  const [deployed] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "AccountDeployed" });
  assert.equal(deployed?.args.sender, op.sender);
  assert.equal(deployed?.args.factory, factory);

  // The account exists with its owner, the whitelisted call ran, and the account paid for nothing.
  assert.equal(await hasCode(env, op.sender), true);
  const accountOwner = await env.publicClient.readContract({
    address: op.sender,
    abi: simpleAccountAbi,
    functionName: "owner",
  });
  assert.equal(accountOwner, owner.address);
  assert.equal(await hasCode(env, created), true);
  const createdOwner = await env.publicClient.readContract({
    address: created,
    abi: simpleAccountAbi,
    functionName: "owner",
  });
  assert.equal(createdOwner, otherOwner);
  assert.equal(await env.publicClient.getBalance({ address: op.sender }), 0n);

  // The dApp's deposit paid: more than nothing, at most the EntryPoint's cost plus the contract's fixed overhead.
  const { actualGasCost, actualGasUsed } = event.args;
  const gasPrice = actualGasCost / actualGasUsed;
  assert.equal(actualGasCost % actualGasUsed, 0n);
  const block = await env.publicClient.getBlock({ blockNumber: receipt.blockNumber });
  assert.equal(gasPrice, (block.baseFeePerGas ?? 0n) + op.maxPriorityFeePerGas);
  const overheadGas = await env.publicClient.readContract({ ...paymaster, functionName: "POST_OP_OVERHEAD_GAS" });
  assert.equal(overheadGas, 12_000n);
  const charged = depositBefore - (await dappBalance(env));
  assert.ok(charged > 0n, "the dApp's deposit did not drop");
  assert.ok(
    charged <= actualGasCost + overheadGas * gasPrice,
    `charged ${charged}, more than ${actualGasCost} + ${overheadGas} gas × ${gasPrice}`,
  );
  const [charge] = parseEventLogs({ abi: paymaster.abi, logs: receipt.logs, eventName: "GasCharged" });
  assert.equal(charge?.args.charge, charged);
  assert.equal(charge?.args.userOpHash, event.args.userOpHash);
  const entryPointTook =
    entryPointDepositBefore -
    (await env.publicClient.readContract({
      address: ENTRY_POINT_V06_ADDRESS,
      abi: entryPointAbi,
      functionName: "balanceOf",
      args: [LOCAL_VERIFYING_PAYMASTER_ADDRESS],
    }));
  assert.equal(entryPointTook, actualGasCost);

  // The service's record of the sponsorship names the operation the EntryPoint ran.
  const records = (await listSponsorships(requireService().db, dapp.paymasterId)).filter((r) => r.sponsored);
  assert.equal(records.length, 1);
  assert.equal(records[0]?.user_op_hash?.toLowerCase(), event.args.userOpHash.toLowerCase());
  assert.equal(records[0]?.sender.toLowerCase(), op.sender.toLowerCase());
  assert.equal(records[0]?.nonce, "0");
  assert.equal(Number(records[0]?.valid_until), terms.validUntil);

  // The charge is the cost before postOp plus the overhead; the EntryPoint's cost also covers postOp and what follows.
  const afterPostOpGas = overheadGas - (charged - actualGasCost) / gasPrice;
  const reserved =
    (GAS.callGasLimit + 3n * GAS.verificationGasLimit + GAS.preVerificationGas + overheadGas) * op.maxFeePerGas;
  t.diagnostic(
    `handleOps transaction gas ${receipt.gasUsed}; operation gas ${actualGasUsed} (preVerificationGas included) at ` +
      `${gasPrice} wei; EntryPoint took ${actualGasCost} wei; dApp charged ${charged} wei ` +
      `(+${charged - actualGasCost} wei = overhead ${overheadGas} less ${afterPostOpGas} gas spent in and after postOp); ` +
      `reserved at validation ${reserved} wei`,
  );
});

test("another method of the whitelisted contract is not sponsored", async () => {
  const env = requireChain(chain);
  const owner = privateKeyToAccount(generatePrivateKey());
  const call = encodeFunctionData({
    abi: simpleAccountFactoryAbi,
    functionName: "getAddress",
    args: [owner.address, 0n],
  });
  const result = await sponsorOverHttp(await firstOperation(env, owner, 0n, call));
  assert.equal(result.paymasterAndData, "0x");
  assert.match(result.reason ?? "", /^Smart contract data not found/);
});

test("the same response with a changed gas field fails the paymaster's signature check (AA34)", async () => {
  const { env, op, owner } = await beforeExecution();
  // The response as given still passes at this state, so the change alone is what fails.
  await simulateBundle(env, [op]);
  const changed = await signedByOwner(env, { ...op, callGasLimit: op.callGasLimit + 1n }, owner);
  assert.deepEqual(await failedOpOf(env, [changed]), { errorName: "FailedOp", args: [0n, AA34] });
});

test("the same response on another chain id fails the paymaster's signature check (AA34)", async () => {
  assert.ok(sponsored, "the end-to-end test must run first");
  const env = requireChain(otherChain);
  assert.equal(await env.publicClient.getChainId(), OTHER_CHAIN_ID);
  const { op, owner } = sponsored;
  // Same contracts, signer and deposit: the operation's account does not exist there yet either.
  assert.equal(await hasCode(env, op.sender), false);
  assert.equal(await dappBalance(env), DEPOSIT);

  // Unchanged, the account's own signature fails first: the userOpHash covers the chain id too.
  assert.deepEqual(await failedOpOf(env, [op]), { errorName: "FailedOp", args: [0n, AA24] });
  // Signed by the owner for this chain, only the service's paymaster signature (made for chain 31337) is left to fail.
  const resigned = await signedByOwner(env, op, owner);
  assert.deepEqual(await failedOpOf(env, [resigned]), { errorName: "FailedOp", args: [0n, AA34] });

  // The same terms signed by the same key for this chain id pass: the chain id is the only difference.
  const terms = decodeVerifyingPaymasterAndData(op.paymasterAndData);
  const forThisChain = await sponsor(
    { ...op, paymasterAndData: "0x" },
    { ...terms, signer: serviceSigner, chainId: OTHER_CHAIN_ID },
  );
  await simulateBundle(env, [await signedByOwner(env, forThisChain, owner)]);
});

test("a response used after its validUntil is refused by the EntryPoint (AA32)", async () => {
  const { env, op, owner } = await beforeExecution();
  const requestedAt = Math.floor(Date.now() / 1000);
  const fresh = await sponsoredBy({ ...op, paymasterAndData: "0x", signature: "0x" }, { expiryDuration: 60 });
  const { validUntil } = decodeVerifyingPaymasterAndData(fresh.paymasterAndData);
  assert.ok(validUntil >= requestedAt + 60 && validUntil <= requestedAt + 62, `validUntil ${validUntil}`);
  const signed = await signedByOwner(env, fresh, owner);
  await simulateBundle(env, [signed]); // valid now

  const chainNow = await latestTimestamp(env);
  await env.testClient.increaseTime({ seconds: validUntil - chainNow + 1 });
  await env.testClient.mine({ blocks: 1 });
  assert.ok((await latestTimestamp(env)) > validUntil);
  assert.deepEqual(await failedOpOf(env, [signed]), { errorName: "FailedOp", args: [0n, AA32] });
});

function requireService(): TestApp {
  assert.ok(service, "the service did not start");
  return service;
}
