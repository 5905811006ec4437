// ERC20 mode end to end through a real bundler: a new SimpleAccount holding only test tokens (TUSD, no ether) asks the
// service for a fee quote, builds the batch docs/erc20-mode.md describes, executeBatch([token, target],
// [approve(tokenPaymaster, quoted maximum), call]), has it signed in ERC20 mode with calculateGasLimits, and the Alto
// bundler (a child process against anvil, unsafe mode) mines it: the user's TUSD pays the gas, at most the quoted
// amount, and the token paymaster's EntryPoint deposit paid the bundler.
//
// The approve rides in the operation itself, which validation runs before: the contract's allowanceRequired (on by
// default) refuses that, as the first test shows through the service's estimate; the local chain turns it off
// (src/devChain/localTokens.ts says what the owner accepts by that), and so do the tests after it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Address, concat, encodeFunctionData, erc20Abi, type Hex, maxUint256, parseEventLogs, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import { tokenPaymasterArtifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { decodeTokenPaymasterAndData, maxTokenCost } from "../../src/bindings/paymasters/tokenPaymasterAndData";
import type { ChainConfig } from "../../src/config";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { deployLocalStack } from "../../src/devChain/localDeployment";
import { LOCAL_TOKENS } from "../../src/devChain/localTokens";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import {
  addTokenPaymasterSigner,
  deployLocalTokenStack,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { createSigner } from "../../src/signer/signer";
import { anvilKeys, type LocalChain, startLocalChain } from "../contracts/fixtures";
import { type Alto, startAlto } from "../helpers/alto";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { sendAndWaitV06 } from "../helpers/bundlerV06";
import { postJsonRpc } from "../helpers/postJsonRpc";

const CHAIN_ID = 31337;
const factory = simpleAccountFactoryDeployment.address;
const serviceSigner = createSigner(generatePrivateKey());
/** What each new account is given: 100 TUSD and no ether. */
const MINTED = 100_000_000n;
const tokenPaymaster = { address: LOCAL_TOKEN_PAYMASTER_ADDRESS, abi: tokenPaymasterArtifact.abi } as const;

interface Service {
  app: TestApp;
  baseUrl: string;
  dapp: Dapp;
}

let chain: LocalChain | undefined;
let alto: Alto | undefined;
const services: Service[] = [];
let withBundler: Service;
let withoutBundler: Service;

before(async () => {
  chain = await startLocalChain({ chainId: CHAIN_ID });
  const owner = chain.clients(anvilKeys.owner);
  await deployLocalStack(owner);
  await deployLocalTokenStack(owner);
  await addTokenPaymasterSigner(owner, serviceSigner.address);
  alto = await startAlto({
    rpcUrl: chain.anvil.rpcUrl,
    executorKey: anvilKeys.bundler,
    utilityKey: anvilKeys.stranger,
  });
  withBundler = await startService({ rpcUrl: chain.anvil.rpcUrl, bundlerUrl: altoUrl("v2") });
  withoutBundler = await startService({ rpcUrl: chain.anvil.rpcUrl });
});

after(async () => {
  try {
    for (const service of services) await service.app.close();
  } finally {
    await alto?.stop();
    await chain?.anvil.stop();
  }
});

/** A service whose chain 31337 has the local token paymaster and TUSD priced by the aggregator, listening for real. */
async function startService(chainConfig: Pick<ChainConfig, "rpcUrl" | "bundlerUrl">): Promise<Service> {
  const app = await startTestApp({
    signer: serviceSigner,
    chains: new Map([
      [
        CHAIN_ID,
        {
          chainId: CHAIN_ID,
          name: "local",
          tokenPaymaster: LOCAL_TOKEN_PAYMASTER_ADDRESS,
          tokens: [...LOCAL_TOKENS],
          ...chainConfig,
        },
      ],
    ]),
  });
  // ERC20 mode needs no funding wallet, policy or whitelist: a bare dApp's apiKey is enough.
  const service: Service = { app, baseUrl: "", dapp: await app.dapp() };
  services.push(service);
  service.baseUrl = await app.app.listen({ port: 0, host: "127.0.0.1" });
  return service;
}

function altoUrl(version: "v1" | "v2"): string {
  assert.ok(alto, "Alto did not start");
  return `${alto.url}/${version}/rpc`;
}

function requireChain(): LocalChain {
  assert.ok(chain, "anvil did not start");
  return chain;
}

async function serviceCall<T>(service: Service, method: string, params: unknown[]) {
  return postJsonRpc<T>(`${service.baseUrl}/api/v1/${CHAIN_ID}/${service.dapp.apiKey}`, method, params);
}

interface FeeQuote {
  symbol: string;
  decimal: number;
  tokenAddress: string;
  maxGasFee: number;
  maxGasFeeUSD: number | null;
  exchangeRate: number;
  premiumPercentage: string;
  validUntil: number;
}

interface Erc20Result {
  mode: string;
  paymasterAndData: Hex;
  callGasLimit: number;
  verificationGasLimit: number;
  preVerificationGas: string;
  maxFeePerGas?: Hex;
  maxPriorityFeePerGas?: Hex;
}

/** A new account, its first operation's initCode, and a call for it: the factory creates a second account. */
async function newAccount(minted = MINTED) {
  const env = requireChain();
  const owner = privateKeyToAccount(generatePrivateKey());
  const otherOwner = privateKeyToAccount(generatePrivateKey()).address;
  const [sender, created] = await Promise.all(
    [owner.address, otherOwner].map((who) =>
      env.publicClient.readContract({
        address: factory,
        abi: simpleAccountFactoryAbi,
        functionName: "getAddress",
        args: [who, 0n],
      }),
    ),
  );
  const initCode = concat([
    factory,
    encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [owner.address, 0n] }),
  ]);
  const target = {
    to: factory,
    data: encodeFunctionData({ abi: simpleAccountFactoryAbi, functionName: "createAccount", args: [otherOwner, 0n] }),
  };
  if (minted > 0n) await mintTestTokens(env.clients(anvilKeys.owner), sender as Address, minted);
  return { owner, sender: sender as Address, created: created as Address, initCode, target };
}

/** The ERC20-mode batch (docs/erc20-mode.md): approve the token paymaster for `amount`, then the call. */
function batch(amount: bigint, target: { to: Address; data: Hex }): Hex {
  return encodeFunctionData({
    abi: simpleAccountAbi,
    functionName: "executeBatch",
    args: [
      [LOCAL_TEST_TOKEN_ADDRESS, target.to],
      [
        encodeFunctionData({ abi: erc20Abi, functionName: "approve", args: [LOCAL_TOKEN_PAYMASTER_ADDRESS, amount] }),
        target.data,
      ],
    ],
  });
}

/** The call alone, as the SDK sends it to be quoted: the approve is added after the quote. */
function single(target: { to: Address; data: Hex }): Hex {
  return encodeFunctionData({ abi: simpleAccountAbi, functionName: "execute", args: [target.to, 0n, target.data] });
}

/** pm_getFeeQuoteOrData for TUSD of the account's first operation with `callData`. */
function quoteTusd(service: Service, account: { sender: Address; initCode: Hex }, callData: Hex) {
  return serviceCall<{ feeQuotes: FeeQuote[] }>(service, "pm_getFeeQuoteOrData", [
    { sender: account.sender, nonce: "0x0", initCode: account.initCode, callData, signature: "0x" },
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { preferredToken: LOCAL_TEST_TOKEN_ADDRESS } },
  ]);
}

function tokenBalance(address: Address): Promise<bigint> {
  return requireChain().publicClient.readContract({
    address: LOCAL_TEST_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: "balanceOf",
    args: [address],
  });
}

function paymasterDeposit(): Promise<bigint> {
  return requireChain().publicClient.readContract({ ...tokenPaymaster, functionName: "getDeposit" });
}

async function setAllowanceRequired(required: boolean): Promise<void> {
  const env = requireChain();
  const hash = await env
    .wallet(anvilKeys.owner)
    .writeContract({ ...tokenPaymaster, functionName: "setAllowanceRequired", args: [required] });
  await env.publicClient.waitForTransactionReceipt({ hash });
}

/**
 * The wallet's whole flow: quote TUSD for the batch (its approve at a placeholder of the same shape), approve the
 * quoted maximum, have the operation signed in ERC20 mode without gas fields, sign it as the owner, send it to Alto.
 */
async function runFlow(
  service: Service,
  bundlerUrl: string,
  quoteOf: "with a placeholder approve" | "without approve",
) {
  const env = requireChain();
  const account = await newAccount();
  const wireOp = (callData: Hex) => ({
    sender: account.sender,
    nonce: "0x0",
    initCode: account.initCode,
    callData,
    signature: "0x",
  });

  let started = performance.now();
  const quoted = await serviceCall<{ paymasterAddress: Address; feeQuotes: FeeQuote[]; unsupportedTokens: string[] }>(
    service,
    "pm_getFeeQuoteOrData",
    [
      // A finite placeholder: with an unlimited allowance the token skips the allowance write when postOp pulls the
      // charge, which would quote a little less gas than the final operation needs.
      wireOp(quoteOf === "without approve" ? single(account.target) : batch(maxUint256 - 1n, account.target)),
      { mode: "ERC20", calculateGasLimits: true, tokenInfo: { preferredToken: LOCAL_TEST_TOKEN_ADDRESS } },
    ],
  );
  const quoteMs = Math.round(performance.now() - started);
  assert.equal(quoted.status, 200, JSON.stringify(quoted.body));
  assert.ok(quoted.body.result);
  assert.equal(quoted.body.result.paymasterAddress, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  const [quote] = quoted.body.result.feeQuotes;
  assert.ok(quote && quote.symbol === "TUSD", JSON.stringify(quoted.body.result));
  // What the SDK approves from a quote.
  const approved = BigInt(Math.ceil(quote.maxGasFee * 10 ** quote.decimal));

  const callData = batch(approved, account.target);
  started = performance.now();
  const sponsored = await serviceCall<Erc20Result>(service, "pm_sponsorUserOperation", [
    wireOp(callData),
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { feeTokenAddress: LOCAL_TEST_TOKEN_ADDRESS } },
  ]);
  const sponsorMs = Math.round(performance.now() - started);
  assert.equal(sponsored.status, 200, JSON.stringify(sponsored.body));
  const result = sponsored.body.result;
  assert.ok(result && result.mode === "ERC20", JSON.stringify(sponsored.body));
  assert.match(result.maxFeePerGas ?? "", /^0x[0-9a-f]+$/, "the fees the service chose are returned");

  const unsigned: UserOperation = {
    sender: account.sender,
    nonce: 0n,
    initCode: account.initCode,
    callData,
    callGasLimit: BigInt(result.callGasLimit),
    verificationGasLimit: BigInt(result.verificationGasLimit),
    preVerificationGas: BigInt(result.preVerificationGas),
    maxFeePerGas: BigInt(result.maxFeePerGas as Hex),
    maxPriorityFeePerGas: BigInt(result.maxPriorityFeePerGas as Hex),
    paymasterAndData: result.paymasterAndData,
    signature: "0x",
  };
  const signedTerms = decodeTokenPaymasterAndData(result.paymasterAndData);
  const signedMaximum = maxTokenCost(unsigned, signedTerms.exchangeRate, signedTerms.priceMarkup);
  const op = {
    ...unsigned,
    signature: await account.owner.signMessage({
      message: { raw: getUserOpHash(unsigned, ENTRY_POINT_V06_ADDRESS, CHAIN_ID) },
    }),
  };

  const [balanceBefore, depositBefore, collectedBefore] = await Promise.all([
    tokenBalance(account.sender),
    paymasterDeposit(),
    tokenBalance(LOCAL_TOKEN_PAYMASTER_ADDRESS),
  ]);
  const receipt = await sendAndWaitV06(bundlerUrl, op, CHAIN_ID, () => alto?.output() ?? "");
  assert.equal(receipt.success, true, JSON.stringify(receipt));
  assert.equal(receipt.paymaster.toLowerCase(), LOCAL_TOKEN_PAYMASTER_ADDRESS.toLowerCase());
  const code = await env.publicClient.getCode({ address: account.created });
  assert.ok(code && code !== "0x", "the batch's call ran");

  const transaction = await env.publicClient.getTransactionReceipt({ hash: receipt.receipt.transactionHash });
  const [charged] = parseEventLogs({ abi: tokenPaymaster.abi, logs: transaction.logs, eventName: "TokenCharged" });
  assert.ok(charged, "the token paymaster charged the sender");
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: transaction.logs, eventName: "UserOperationEvent" });
  assert.ok(event);

  const [balanceAfter, depositAfter, collectedAfter] = await Promise.all([
    tokenBalance(account.sender),
    paymasterDeposit(),
    tokenBalance(LOCAL_TOKEN_PAYMASTER_ADDRESS),
  ]);
  const paid = balanceBefore - balanceAfter;
  assert.equal(paid, charged.args.amount, "the sender paid what the paymaster charged, nothing else");
  assert.ok(paid > 0n && paid <= approved, `paid ${paid} ≤ quoted ${approved}`);
  assert.ok(paid <= signedMaximum);
  // Quoted with the approve in place, or without it (the SDK's way: the quote adds the approve's gas), and no block in
  // between, the signed operation's maximum is within the quote.
  assert.ok(signedMaximum <= approved, `signed maximum ${signedMaximum} ≤ quoted ${approved}`);
  assert.equal(collectedAfter - collectedBefore, paid, "the tokens went to the token paymaster");
  assert.equal(depositBefore - depositAfter, event.args.actualGasCost, "the paymaster's deposit paid the gas");
  assert.ok(event.args.actualGasCost > 0n);
  assert.equal(await env.publicClient.getBalance({ address: account.sender }), 0n, "the account never held ether");

  const tusd = (value: bigint) => `${Number(value) / 1e6} TUSD`;
  return (
    `quote ${quoteMs} ms (maxGasFee ${quote.maxGasFee} TUSD), sponsor ${sponsorMs} ms: callGasLimit ` +
    `${result.callGasLimit}, verificationGasLimit ${result.verificationGasLimit}, preVerificationGas ` +
    `${result.preVerificationGas}; paid ${tusd(paid)} of ${tusd(approved)} approved (signed maximum ` +
    `${tusd(signedMaximum)}); deposit paid ${event.args.actualGasCost} wei for ${event.args.actualGasUsed} gas`
  );
}

// The SDK quotes the operation before it adds the approve; the quote is estimated as if the allowance were given.
test("with allowanceRequired on, an operation that does not approve yet is quoted, by the node and through Alto v2", async (t) => {
  const account = await newAccount();
  for (const [name, service] of Object.entries({ node: withoutBundler, alto: withBundler })) {
    const reply = await quoteTusd(service, account, single(account.target));
    assert.equal(reply.status, 200, `${name}: ${JSON.stringify(reply.body)}`);
    const [quote] = reply.body.result?.feeQuotes ?? [];
    assert.ok(quote && quote.symbol === "TUSD" && quote.maxGasFee > 0, `${name}: ${JSON.stringify(reply.body)}`);
    t.diagnostic(`${name}: maxGasFee ${quote.maxGasFee} TUSD`);
  }
  // The allowance is assumed for the estimate only: nothing was written on chain.
  const allowance = await requireChain().publicClient.readContract({
    address: LOCAL_TEST_TOKEN_ADDRESS,
    abi: erc20Abi,
    functionName: "allowance",
    args: [account.sender, LOCAL_TOKEN_PAYMASTER_ADDRESS],
  });
  assert.equal(allowance, 0n);
});

test("a quote is still refused when the operation fails for another reason: no tokens, or a reverting call", async () => {
  const broke = await newAccount(0n);
  const funded = await newAccount();
  // createAccount on an address that is no factory: the call reverts.
  const reverting = single({ to: LOCAL_TOKEN_PAYMASTER_ADDRESS, data: funded.target.data });
  for (const [name, service] of Object.entries({ node: withoutBundler, alto: withBundler })) {
    const noTokens = await quoteTusd(service, broke, single(broke.target));
    assert.equal(noTokens.status, 400, `${name}: ${JSON.stringify(noTokens.body)}`);
    assert.equal(noTokens.body.error?.code, -32602);
    assert.match(noTokens.body.error?.message ?? "", /fee token balance below the maximum charge/, name);

    const reverts = await quoteTusd(service, funded, reverting);
    assert.equal(reverts.status, 400, `${name}: ${JSON.stringify(reverts.body)}`);
    assert.equal(reverts.body.error?.code, -32602);
    assert.match(reverts.body.error?.message ?? "", /Gas estimation failed/, name);
  }
});

test("with allowanceRequired on (the contract's default), an approve in the same batch is refused at estimation", async () => {
  const account = await newAccount();
  const reply = await serviceCall<Erc20Result>(withoutBundler, "pm_sponsorUserOperation", [
    {
      sender: account.sender,
      nonce: toHex(0n),
      initCode: account.initCode,
      callData: batch(MINTED, account.target),
      signature: "0x",
    },
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { feeTokenAddress: LOCAL_TEST_TOKEN_ADDRESS } },
  ]);
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.error?.code, -32602);
  assert.match(
    reply.body.error?.message ?? "",
    /Gas estimation failed: the operation fails validation: AA33 reverted: TokenPaymaster: fee token allowance below the maximum charge/,
  );
  await setAllowanceRequired(false);
});

// As in alto.test.ts: the operations go to Alto's v2 API (Pimlico's), which checks preVerificationGas and fees
// against its own rules; with a bundler configured it also estimates and chooses the fees.
test("through Alto with the chain's bundler estimating: a token-paid operation is mined, within the quote", async (t) => {
  t.diagnostic(await runFlow(withBundler, altoUrl("v2"), "with a placeholder approve"));
});

test("through Alto with the service's own estimate through the node: the same", async (t) => {
  t.diagnostic(await runFlow(withoutBundler, altoUrl("v2"), "with a placeholder approve"));
});

test("through Alto, quoted as the SDK quotes (without the approve): the operation is mined, paying at most the quote", async (t) => {
  t.diagnostic(await runFlow(withBundler, altoUrl("v2"), "without approve"));
  t.diagnostic(await runFlow(withoutBundler, altoUrl("v2"), "without approve"));
});
