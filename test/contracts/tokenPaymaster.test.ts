// The TokenPaymaster against the real EntryPoint v0.6 and SimpleAccount on anvil, with operations built and signed by
// the service's own encoder and signer. Each test runs from the same snapshot.
//
// The allowance: validation requires the sender to have approved the paymaster for the maximum charge already (that is
// what makes the charge impossible to dodge), so these tests approve it beforehand through the account owner's direct
// path (SimpleAccount.execute called by its owner, which needs no user operation). A wallet could equally approve in an
// earlier operation, paid in ether or sponsored. The approve-in-the-same-batch flow of the public service's SDK works
// only once the owner turns allowanceRequired off, and the last tests show what that costs the owner.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type Abi,
  type Address,
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  type Hex,
  isAddressEqual,
  maxUint256,
  numberToHex,
  parseEther,
  parseEventLogs,
  parseGwei,
  slice,
  type TransactionReceipt,
  zeroAddress,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { ENTRY_POINT_V06_ADDRESS, entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import {
  fixedPriceAggregatorArtifact,
  testTokenArtifact,
  tokenPaymasterArtifact,
} from "../../src/bindings/paymasters/tokenArtifacts";
import {
  encodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  maxGasCostWithPaymaster,
  maxTokenCost,
  oracleExchangeRate,
  PRICE_SOURCE,
  TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  type TokenFeeTerms,
  tokenAmountForWei,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { simpleAccountFactoryDeployment } from "../../src/devChain/deployments";
import { deployLocalStack } from "../../src/devChain/localDeployment";
import { simpleAccountAbi, simpleAccountFactoryAbi } from "../../src/devChain/simpleAccount";
import {
  addTokenPaymasterSigner,
  deployLocalTokenStack,
  LOCAL_PRICE,
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  LOCAL_TEST_TOKEN,
  LOCAL_TEST_TOKEN_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { createSigner, type Signer } from "../../src/signer/signer";
import { revertEachTest } from "../helpers/revertEachTest";
import {
  anvilKeys,
  failedOpOf,
  handleOps,
  type LocalChain,
  latestTimestamp,
  revertOf,
  signByAccount,
  simulateBundle,
  startLocalChain,
  type Wallet,
} from "./fixtures";

const AA34 = "AA34 signature error";
const AA32 = "AA32 paymaster expired or not due";
const AA33 = (reason: string) => `AA33 reverted: TokenPaymaster: ${reason}`;
const OWNABLE = { errorName: "Error", args: ["Ownable: caller is not the owner"] };

/** 3,000 six-decimal tokens per ether, the local aggregator's price too. */
const RATE = 3_000n * 10n ** 6n;
const MARKUP = 1_100_000;
const TOKENS = (whole: bigint) => whole * 10n ** BigInt(LOCAL_TEST_TOKEN.decimals);

let env: LocalChain;
let serviceSigner: Signer;

before(async () => {
  env = await startLocalChain({ chainId: 4337 });
  const owner = env.clients(anvilKeys.owner);
  await deployLocalStack(owner);
  await deployLocalTokenStack(owner);
  serviceSigner = createSigner(generatePrivateKey());
  await addTokenPaymasterSigner(owner, serviceSigner.address);
});
after(() => env?.anvil.stop());
revertEachTest(() => env.testClient);

const paymaster = { address: LOCAL_TOKEN_PAYMASTER_ADDRESS, abi: tokenPaymasterArtifact.abi } as const;
const token = { address: LOCAL_TEST_TOKEN_ADDRESS, abi: testTokenArtifact.abi } as const;
const aggregator = { address: LOCAL_PRICE_AGGREGATOR_ADDRESS, abi: fixedPriceAggregatorArtifact.abi } as const;

/** A transaction by `key`, which must succeed. Loosely typed: the tests call many functions of three contracts. */
async function send(
  key: Hex,
  call: { address: Address; abi: Abi; functionName: string; args?: readonly unknown[]; value?: bigint },
) {
  const hash = await env.wallet(key).writeContract(call as Parameters<Wallet["writeContract"]>[0]);
  const receipt = await env.publicClient.waitForTransactionReceipt({ hash });
  if (receipt.status !== "success") {
    // Seen once in CI (setAnswer by the owner, not reproduced since): say whether it ran out of gas or reverted, and why.
    const tx = await env.publicClient.getTransaction({ hash });
    const why = await env.publicClient
      .call({ account: tx.from, to: tx.to, data: tx.input, blockNumber: receipt.blockNumber - 1n })
      .then(
        () => "the same call succeeds on the block before",
        (error: Error) => error.message.split("\n")[0],
      );
    assert.fail(`${call.functionName} reverted: gas used ${receipt.gasUsed} of ${tx.gas}, from ${tx.from}; ${why}`);
  }
  return receipt;
}

function tokenBalance(address: Address): Promise<bigint> {
  return env.publicClient.readContract({ ...token, functionName: "balanceOf", args: [address] });
}

function allowance(owner: Address): Promise<bigint> {
  return env.publicClient.readContract({
    ...token,
    functionName: "allowance",
    args: [owner, LOCAL_TOKEN_PAYMASTER_ADDRESS],
  });
}

function deposit(): Promise<bigint> {
  return env.publicClient.readContract({ ...paymaster, functionName: "getDeposit" });
}

function transferCall(to: Address, amount: bigint) {
  return {
    to: LOCAL_TEST_TOKEN_ADDRESS,
    data: encodeFunctionData({ ...token, functionName: "transfer", args: [to, amount] }),
  };
}

function approveCall(spender: Address, amount: bigint) {
  return {
    to: LOCAL_TEST_TOKEN_ADDRESS,
    data: encodeFunctionData({ ...token, functionName: "approve", args: [spender, amount] }),
  };
}

function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

interface TestAccount {
  address: Address;
  ownerKey: Hex;
}

/**
 * A deployed SimpleAccount holding `mint` tokens that has approved the paymaster for `approve`, both done outside any
 * user operation: the factory is called directly and the account's owner calls execute itself.
 */
async function newAccount(options: { mint?: bigint; approve?: bigint } = {}): Promise<TestAccount> {
  const ownerKey = generatePrivateKey();
  const owner = privateKeyToAccount(ownerKey).address;
  const factory = { address: simpleAccountFactoryDeployment.address, abi: simpleAccountFactoryAbi } as const;
  await send(anvilKeys.owner, { ...factory, functionName: "createAccount", args: [owner, 0n] });
  const address = await env.publicClient.readContract({ ...factory, functionName: "getAddress", args: [owner, 0n] });
  await env.testClient.setBalance({ address: owner, value: parseEther("1") });
  const mint = options.mint ?? TOKENS(1_000n);
  if (mint > 0n) await mintTestTokens(env.clients(anvilKeys.owner), address, mint);
  const approve = options.approve ?? TOKENS(1_000n);
  if (approve > 0n) await ownerCalls({ address, ownerKey }, [approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, approve)]);
  return { address, ownerKey };
}

/** The account's owner calling its account directly (SimpleAccount lets the owner or the EntryPoint execute). */
async function ownerCalls(account: TestAccount, calls: { to: Address; data: Hex }[]) {
  return send(account.ownerKey, {
    address: account.address,
    abi: simpleAccountAbi,
    functionName: "executeBatch",
    args: [calls.map((call) => call.to), calls.map((call) => call.data)],
  });
}

async function terms(overrides: Partial<TokenFeeTerms> = {}): Promise<TokenFeeTerms> {
  const now = await latestTimestamp(env);
  return {
    priceSource: PRICE_SOURCE.exchangeRate,
    validUntil: now + 300,
    validAfter: now - 60,
    feeToken: LOCAL_TEST_TOKEN_ADDRESS,
    oracleAggregator: zeroAddress,
    exchangeRate: RATE,
    priceMarkup: MARKUP,
    ...overrides,
  };
}

/** An operation of `account` running `calls`, gas fields filled in, paymasterAndData and signatures still empty. */
async function unsignedOp(account: TestAccount, calls: { to: Address; data: Hex }[]): Promise<UserOperation> {
  const nonce = await env.publicClient.readContract({
    address: ENTRY_POINT_V06_ADDRESS,
    abi: entryPointAbi,
    functionName: "getNonce",
    args: [account.address, 0n],
  });
  const block = await env.publicClient.getBlock();
  const maxPriorityFeePerGas = parseGwei("1");
  return {
    sender: account.address,
    nonce,
    initCode: "0x",
    callData: encodeFunctionData({
      abi: simpleAccountAbi,
      functionName: "executeBatch",
      args: [calls.map((call) => call.to), calls.map((call) => call.data)],
    }),
    callGasLimit: 200_000n,
    verificationGasLimit: 200_000n,
    preVerificationGas: 50_000n,
    maxFeePerGas: 2n * (block.baseFeePerGas ?? 0n) + maxPriorityFeePerGas,
    maxPriorityFeePerGas,
    paymasterAndData: "0x",
    signature: "0x",
  };
}

/** What the service does (hash, sign, lay out), then the account's own signature over the result. */
async function tokenOp(
  account: TestAccount,
  calls: { to: Address; data: Hex }[],
  options: { terms?: Partial<TokenFeeTerms>; signer?: Signer; change?: (op: UserOperation) => UserOperation } = {},
): Promise<{ op: UserOperation; terms: TokenFeeTerms }> {
  const op = await unsignedOp(account, calls);
  const quoted = await terms(options.terms);
  const signer = options.signer ?? serviceSigner;
  const hash = getTokenPaymasterHash(op, { ...quoted, chainId: env.anvil.chainId, paymaster: paymaster.address });
  const signature = await signer.signHash(hash);
  const signed = {
    ...op,
    paymasterAndData: encodeTokenPaymasterAndData({ ...quoted, paymaster: paymaster.address, signature }),
  };
  const changed = options.change ? options.change(signed) : signed;
  return { op: await signByAccount(env, changed, privateKeyToAccount(account.ownerKey)), terms: quoted };
}

/**
 * An operation with terms the service's encoder refuses to lay out (a markup out of bounds, a price source of 2),
 * signed with the right key over the contract's own getHash, so only the contract's check can refuse it.
 */
async function rawTokenOp(account: TestAccount, calls: { to: Address; data: Hex }[], raw: TokenFeeTerms) {
  const op = await unsignedOp(account, calls);
  const hash = await env.publicClient.readContract({ ...paymaster, functionName: "getHash", args: [op, raw] });
  const signature = await serviceSigner.signHash(hash);
  const paymasterAndData = concat([
    paymaster.address,
    numberToHex(raw.priceSource, { size: 1 }),
    encodeAbiParameters(
      ["uint48", "uint48", "address", "address", "uint256", "uint32"].map((type) => ({ type })),
      [raw.validUntil, raw.validAfter, raw.feeToken, raw.oracleAggregator, raw.exchangeRate, raw.priceMarkup],
    ),
    signature,
  ]);
  return signByAccount(env, { ...op, paymasterAndData }, privateKeyToAccount(account.ownerKey));
}

function operationEvent(receipt: TransactionReceipt, sender: Address) {
  const event = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" }).find(
    (log) => isAddressEqual(log.args.sender, sender),
  );
  assert.ok(event, `no UserOperationEvent for ${sender}`);
  return event.args;
}

function paymasterEvents(receipt: TransactionReceipt) {
  return {
    charged: parseEventLogs({ abi: paymaster.abi, logs: receipt.logs, eventName: "TokenCharged" }),
    failed: parseEventLogs({ abi: paymaster.abi, logs: receipt.logs, eventName: "TokenChargeFailed" }),
  };
}

interface CallFrame {
  to?: string;
  input: string;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/** Gas each call to the paymaster used, by function name, from anvil's geth-style call tracer. */
async function paymasterGas(transactionHash: Hex): Promise<Record<string, bigint[]>> {
  const request = env.publicClient.request as unknown as (args: {
    method: string;
    params: unknown[];
  }) => Promise<CallFrame>;
  const root = await request({ method: "debug_traceTransaction", params: [transactionHash, { tracer: "callTracer" }] });
  const selectors: Record<string, string> = {
    [slice(encodeFunctionData({ ...paymaster, functionName: "postOp", args: [0, "0x", 0n] }), 0, 4)]: "postOp",
  };
  const found: Record<string, bigint[]> = {};
  const walk = (frame: CallFrame) => {
    if (frame.to && isAddressEqual(frame.to as Address, paymaster.address)) {
      const name = selectors[frame.input.slice(0, 10)] ?? "validatePaymasterUserOp";
      found[name] = [...(found[name] ?? []), BigInt(frame.gasUsed)];
    }
    for (const child of frame.calls ?? []) walk(child);
  };
  walk(root);
  return found;
}

test("a token-paid operation runs, the deposit pays the gas and the sender pays tokens, at most the quoted maximum", async (t) => {
  const account = await newAccount();
  const recipient = freshAddress();
  const { op, terms: quoted } = await tokenOp(account, [transferCall(recipient, TOKENS(5n))]);
  const quotedMax = maxTokenCost(op, quoted.exchangeRate, quoted.priceMarkup);
  const tokensBefore = await tokenBalance(account.address);
  const depositBefore = await deposit();

  const receipt = await handleOps(env, [op]);
  const event = operationEvent(receipt, account.address);
  assert.equal(event.success, true);
  assert.ok(isAddressEqual(event.paymaster, paymaster.address));
  assert.equal(await tokenBalance(recipient), TOKENS(5n));

  // The EntryPoint took the gas from the paymaster's deposit, not from the account.
  assert.equal(depositBefore - (await deposit()), event.actualGasCost);
  const { charged, failed } = paymasterEvents(receipt);
  assert.equal(failed.length, 0);
  assert.equal(charged.length, 1);
  const charge = charged[0]?.args;
  assert.ok(charge);
  assert.deepEqual(
    [charge.sender, charge.feeToken, charge.userOpHash, charge.exchangeRate, charge.priceMarkup],
    [account.address, LOCAL_TEST_TOKEN_ADDRESS, event.userOpHash, RATE, MARKUP],
  );
  // The sender paid the charge (besides its own transfer), and the paymaster holds it.
  assert.equal(tokensBefore - (await tokenBalance(account.address)), TOKENS(5n) + charge.amount);
  assert.equal(await tokenBalance(paymaster.address), charge.amount);
  assert.ok(charge.amount <= quotedMax, `charged ${charge.amount}, quoted at most ${quotedMax}`);

  // The charge is the gas before postOp plus the fixed overhead, at the operation's gas price, with the markup.
  const gasPrice = event.actualGasCost / event.actualGasUsed;
  assert.equal(charge.amount, tokenAmountForWei(charge.gasCost, RATE, MARKUP));
  const postOpAndAfter =
    event.actualGasUsed - (charge.gasCost - TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * gasPrice) / gasPrice;
  // This first charge of the token writes the paymaster's token balance from zero (20,000 gas more than later ones),
  // which the overhead does not cover: the shortfall is that write at most, once per token.
  assert.ok(postOpAndAfter > TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS);
  assert.ok(postOpAndAfter - TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS < 20_000n);
  const gas = await paymasterGas(receipt.transactionHash);
  t.diagnostic(
    `first charge of the token: validatePaymasterUserOp ${gas.validatePaymasterUserOp} gas, postOp ${gas.postOp}, in ` +
      `and after postOp ${postOpAndAfter} (overhead charged ${TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS}); ` +
      `${event.actualGasUsed} gas in all; charged ${charge.amount} of ${quotedMax} quoted`,
  );

  // Later charges, the paymaster's token balance already non-zero: the overhead covers the gas in and after postOp, so
  // the tokens pay for at least what the deposit lost.
  const second = await tokenOp(account, [transferCall(recipient, TOKENS(1n))]);
  const secondReceipt = await handleOps(env, [second.op]);
  const secondEvent = operationEvent(secondReceipt, account.address);
  const secondCharge = paymasterEvents(secondReceipt).charged[0]?.args;
  assert.ok(secondCharge && secondEvent.success);
  assert.ok(
    secondCharge.gasCost >= secondEvent.actualGasCost,
    `${secondCharge.gasCost} < ${secondEvent.actualGasCost}`,
  );
  const secondPrice = secondEvent.actualGasCost / secondEvent.actualGasUsed;
  const secondPostOp =
    secondEvent.actualGasUsed -
    (secondCharge.gasCost - TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * secondPrice) / secondPrice;
  const secondGas = await paymasterGas(secondReceipt.transactionHash);
  t.diagnostic(
    `later charges: validatePaymasterUserOp ${secondGas.validatePaymasterUserOp} gas, postOp ${secondGas.postOp}, in ` +
      `and after postOp ${secondPostOp}`,
  );
});

test("the contract computes the hash, the token amounts and the overhead as the service does", async () => {
  const account = await newAccount();
  const { op, terms: quoted } = await tokenOp(account, [transferCall(freshAddress(), 1n)]);
  for (const variant of [
    quoted,
    { ...quoted, priceSource: PRICE_SOURCE.oracle, oracleAggregator: aggregator.address },
  ]) {
    const onChain = await env.publicClient.readContract({ ...paymaster, functionName: "getHash", args: [op, variant] });
    assert.equal(onChain, getTokenPaymasterHash(op, { ...variant, chainId: 4337, paymaster: paymaster.address }));
  }
  const parsed = await env.publicClient.readContract({
    ...paymaster,
    functionName: "parsePaymasterAndData",
    args: [op.paymasterAndData],
  });
  assert.deepEqual(parsed[0], { ...quoted, feeToken: LOCAL_TEST_TOKEN_ADDRESS });
  assert.equal(parsed[1], slice(op.paymasterAndData, 213));

  assert.equal(
    await env.publicClient.readContract({ ...paymaster, functionName: "POST_OP_OVERHEAD_GAS" }),
    TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  );
  for (const [wei, rate, markup] of [
    [maxGasCostWithPaymaster(op), RATE, MARKUP],
    [1n, RATE, 1_000_000],
    [123_456_789_012_345n, 10n ** 18n + 7n, 1_999_999],
    [0n, RATE, 2_000_000],
  ] as const) {
    assert.equal(
      await env.publicClient.readContract({ ...paymaster, functionName: "tokenAmount", args: [wei, rate, markup] }),
      tokenAmountForWei(wei, rate, markup),
    );
  }
  const [rate] = await env.publicClient.readContract({
    ...paymaster,
    functionName: "oracleRate",
    args: [LOCAL_TEST_TOKEN_ADDRESS, aggregator.address],
  });
  assert.equal(rate, oracleExchangeRate(LOCAL_PRICE.answer, LOCAL_PRICE.decimals, LOCAL_TEST_TOKEN.decimals));
  assert.equal(rate, RATE);
});

test("a changed rate, markup, aggregator, price source or gas field, or another signer, fails the signature (AA34)", async () => {
  const account = await newAccount();
  const calls = [transferCall(freshAddress(), 1n)];
  const valid = await tokenOp(account, calls);
  await simulateBundle(env, [valid.op]);

  /** Rewrites one 32-byte word of the terms (0 validUntil ... 5 priceMarkup), keeping the signature. */
  const withWord = (index: number, value: bigint) => (op: UserOperation) => ({
    ...op,
    paymasterAndData: concat([
      slice(op.paymasterAndData, 0, 21 + 32 * index),
      numberToHex(value, { size: 32 }),
      slice(op.paymasterAndData, 21 + 32 * (index + 1)),
    ]),
  });
  const tampered = {
    lowerRate: (await tokenOp(account, calls, { change: withWord(4, RATE / 2n) })).op,
    lowerMarkup: (await tokenOp(account, calls, { change: withWord(5, 1_000_000n) })).op,
    // The same token under another aggregator field: only the signature notices.
    aggregator: (await tokenOp(account, calls, { change: withWord(3, 1n) })).op,
    priceSource: (
      await tokenOp(account, calls, {
        terms: { oracleAggregator: aggregator.address },
        change: (op) => ({
          ...op,
          paymasterAndData: concat([slice(op.paymasterAndData, 0, 20), "0x01", slice(op.paymasterAndData, 21)]),
        }),
      })
    ).op,
    callGasLimit: (await tokenOp(account, calls, { change: (op) => ({ ...op, callGasLimit: op.callGasLimit + 1n }) }))
      .op,
    maxFeePerGas: (await tokenOp(account, calls, { change: (op) => ({ ...op, maxFeePerGas: op.maxFeePerGas + 1n }) }))
      .op,
    otherSigner: (await tokenOp(account, calls, { signer: createSigner(generatePrivateKey()) })).op,
  };
  for (const [name, op] of Object.entries(tampered)) {
    assert.deepEqual(await failedOpOf(env, [op]), { errorName: "FailedOp", args: [0n, AA34] }, name);
  }

  const short = (
    await tokenOp(account, calls, { change: (op) => ({ ...op, paymasterAndData: slice(op.paymasterAndData, 0, 277) }) })
  ).op;
  assert.deepEqual(await failedOpOf(env, [short]), {
    errorName: "FailedOp",
    args: [0n, AA33("signature must be 65 bytes (r,s,v)")],
  });
});

test("a passed validUntil or a future validAfter is refused by the EntryPoint (AA32)", async () => {
  const account = await newAccount();
  const now = await latestTimestamp(env);
  const calls = [transferCall(freshAddress(), 1n)];
  const expired = await tokenOp(account, calls, { terms: { validUntil: now - 1, validAfter: now - 600 } });
  assert.deepEqual(await failedOpOf(env, [expired.op]), { errorName: "FailedOp", args: [0n, AA32] });
  const notYet = await tokenOp(account, calls, { terms: { validUntil: now + 7200, validAfter: now + 3600 } });
  assert.deepEqual(await failedOpOf(env, [notYet.op]), { errorName: "FailedOp", args: [0n, AA32] });
});

test("a markup outside 1e6..2e6, a zero rate, a zero token or an unknown price source is refused (AA33)", async () => {
  const account = await newAccount();
  const calls = [transferCall(freshAddress(), 1n)];
  const base = await terms();
  const cases: [Partial<TokenFeeTerms>, string][] = [
    [{ priceMarkup: 999_999 }, "priceMarkup must be 1e6 to 2e6 (millionths)"],
    [{ priceMarkup: 2_000_001 }, "priceMarkup must be 1e6 to 2e6 (millionths)"],
    [{ priceMarkup: 0 }, "priceMarkup must be 1e6 to 2e6 (millionths)"],
    [{ exchangeRate: 0n }, "exchange rate is zero"],
    [{ feeToken: zeroAddress }, "fee token is zero"],
    [{ priceSource: 2 as 0 }, "priceSource must be 0 (signed rate) or 1 (oracle)"],
  ];
  for (const [change, reason] of cases) {
    const op = await rawTokenOp(account, calls, { ...base, ...change });
    assert.deepEqual(await failedOpOf(env, [op]), { errorName: "FailedOp", args: [0n, AA33(reason)] }, reason);
  }
  // The bounds themselves are accepted.
  for (const priceMarkup of [1_000_000, 2_000_000]) {
    const op = await rawTokenOp(account, calls, { ...base, priceMarkup });
    await simulateBundle(env, [op]);
  }
});

test("a balance or an allowance below the maximum charge is refused in validation, to the base unit", async () => {
  const calls = [transferCall(freshAddress(), 0n)];
  // Each operation is built before its account gets its tokens or allowance, so its fee fields (and so the maximum
  // charge) no longer move with the base fee of the blocks mined meanwhile.
  const poor = await newAccount({ mint: 0n });
  const poorOp = (await tokenOp(poor, calls)).op;
  const poorNeeds = maxTokenCost(poorOp, RATE, MARKUP);
  await mintTestTokens(env.clients(anvilKeys.owner), poor.address, poorNeeds - 1n);
  assert.deepEqual(await failedOpOf(env, [poorOp]), {
    errorName: "FailedOp",
    args: [0n, AA33("fee token balance below the maximum charge")],
  });
  await mintTestTokens(env.clients(anvilKeys.owner), poor.address, 1n);
  await simulateBundle(env, [poorOp]);

  const stingy = await newAccount({ approve: 0n });
  const stingyOp = (await tokenOp(stingy, calls)).op;
  assert.deepEqual(await failedOpOf(env, [stingyOp]), {
    errorName: "FailedOp",
    args: [0n, AA33("fee token allowance below the maximum charge")],
  });
  const stingyNeeds = maxTokenCost(stingyOp, RATE, MARKUP);
  await ownerCalls(stingy, [approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, stingyNeeds - 1n)]);
  assert.deepEqual(await failedOpOf(env, [stingyOp]), {
    errorName: "FailedOp",
    args: [0n, AA33("fee token allowance below the maximum charge")],
  });
  await ownerCalls(stingy, [approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, stingyNeeds)]);
  await simulateBundle(env, [stingyOp]);
});

test("oracle mode charges at the aggregator's fresh price, whatever rate was signed", async (t) => {
  const account = await newAccount();
  await send(anvilKeys.owner, { ...aggregator, functionName: "setAnswer", args: [2_500n * 10n ** 8n] });
  const { op } = await tokenOp(account, [transferCall(freshAddress(), 1n)], {
    terms: { priceSource: PRICE_SOURCE.oracle, oracleAggregator: aggregator.address, exchangeRate: 0n },
  });
  const receipt = await handleOps(env, [op]);
  const event = operationEvent(receipt, account.address);
  assert.equal(event.success, true);
  const charge = paymasterEvents(receipt).charged[0]?.args;
  assert.ok(charge);
  assert.equal(charge.exchangeRate, 2_500n * 10n ** 6n);
  assert.equal(charge.amount, tokenAmountForWei(charge.gasCost, 2_500n * 10n ** 6n, MARKUP));
  assert.ok(charge.amount <= maxTokenCost(op, 2_500n * 10n ** 6n, MARKUP));
  const gas = await paymasterGas(receipt.transactionHash);
  t.diagnostic(`oracle mode: validatePaymasterUserOp ${gas.validatePaymasterUserOp}, postOp ${gas.postOp} gas`);
});

test("a stale oracle price is refused (AA32), and a price going stale cuts the signed window short", async () => {
  const account = await newAccount();
  const calls = [transferCall(freshAddress(), 1n)];
  const oracleTerms = { priceSource: PRICE_SOURCE.oracle, oracleAggregator: aggregator.address } as const;
  const maxPriceAge = BigInt(await env.publicClient.readContract({ ...paymaster, functionName: "maxPriceAge" }));
  const now = BigInt(await latestTimestamp(env));

  await send(anvilKeys.owner, {
    ...aggregator,
    functionName: "setRoundData",
    args: [LOCAL_PRICE.answer, now - maxPriceAge - 1n],
  });
  const stale = await tokenOp(account, calls, { terms: oracleTerms });
  assert.deepEqual(await failedOpOf(env, [stale.op]), { errorName: "FailedOp", args: [0n, AA32] });

  // Fresh for 100 more seconds, signed for 300: accepted now, refused after 100 s though the signature still holds.
  await send(anvilKeys.owner, {
    ...aggregator,
    functionName: "setRoundData",
    args: [LOCAL_PRICE.answer, now - maxPriceAge + 100n],
  });
  const soonStale = await tokenOp(account, calls, { terms: oracleTerms });
  await simulateBundle(env, [soonStale.op]);
  await env.testClient.increaseTime({ seconds: 150 });
  await env.testClient.mine({ blocks: 1 });
  assert.deepEqual(await failedOpOf(env, [soonStale.op]), { errorName: "FailedOp", args: [0n, AA32] });

  // The owner may allow older prices; the same operation then passes again.
  await send(anvilKeys.owner, { ...paymaster, functionName: "setMaxPriceAge", args: [Number(maxPriceAge) + 3600] });
  await simulateBundle(env, [soonStale.op]);
});

test("a zero or negative oracle price, or a round that never completed, is refused with its reason (AA33)", async () => {
  const account = await newAccount();
  const calls = [transferCall(freshAddress(), 1n)];
  const now = BigInt(await latestTimestamp(env));
  const cases: [bigint, bigint, string][] = [
    [0n, now, "oracle price is zero or negative"],
    [-1n, now, "oracle price is zero or negative"],
    [LOCAL_PRICE.answer, 0n, "oracle round not complete"],
    // 1e-8 tokens per ether is below one base unit of a 6-decimal token per 1e18 wei.
    [1n, now, "oracle price rounds to a zero exchange rate"],
  ];
  for (const [answer, updatedAt, reason] of cases) {
    await send(anvilKeys.owner, { ...aggregator, functionName: "setRoundData", args: [answer, updatedAt] });
    const { op } = await tokenOp(account, calls, {
      terms: { priceSource: PRICE_SOURCE.oracle, oracleAggregator: aggregator.address },
    });
    assert.deepEqual(await failedOpOf(env, [op]), { errorName: "FailedOp", args: [0n, AA33(reason)] }, reason);
  }
  const { op } = await tokenOp(account, calls, { terms: { priceSource: PRICE_SOURCE.oracle } });
  assert.deepEqual(await failedOpOf(env, [op]), {
    errorName: "FailedOp",
    args: [0n, AA33("oracle aggregator is zero")],
  });
});

test("an operation that revokes the allowance or moves its tokens away is undone and still charged", async () => {
  // The paymaster already holds some of the token, as it does after its first charge (see the first test).
  await mintTestTokens(env.clients(anvilKeys.owner), paymaster.address, 1n);
  for (const dodge of ["revoke", "transfer away"] as const) {
    const account = await newAccount();
    const elsewhere = freshAddress();
    const allowanceBefore = await allowance(account.address);
    const tokensBefore = await tokenBalance(account.address);
    const call =
      dodge === "revoke" ? approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, 0n) : transferCall(elsewhere, tokensBefore);
    const { op } = await tokenOp(account, [call]);
    const depositBefore = await deposit();

    const receipt = await handleOps(env, [op]);
    const event = operationEvent(receipt, account.address);
    // postOp's failed pull reverted once: the EntryPoint undid the call and charged in postOpReverted mode.
    assert.equal(event.success, false, dodge);
    const { charged, failed } = paymasterEvents(receipt);
    assert.equal(failed.length, 0, dodge);
    const charge = charged[0]?.args;
    assert.ok(charge, dodge);
    assert.equal(await tokenBalance(elsewhere), 0n, dodge);
    assert.equal(tokensBefore - (await tokenBalance(account.address)), charge.amount, dodge);
    assert.equal(allowanceBefore - (await allowance(account.address)), charge.amount, dodge);
    // The charge covers the deposit's loss, the first (reverted) postOp and the undone call included.
    assert.ok(charge.gasCost >= event.actualGasCost, dodge);
    assert.equal(depositBefore - (await deposit()), event.actualGasCost, dodge);
    assert.ok(charge.amount <= maxTokenCost(op, RATE, MARKUP), dodge);
  }
});

test("tokens drained by an earlier operation of the bundle: TokenChargeFailed, and the loss is one signed maxCost at most", async () => {
  // The victim-to-be approved a second account, whose operation runs first in the bundle and takes every token.
  const payer = await newAccount();
  const drainer = await newAccount({ mint: 0n, approve: 0n });
  await ownerCalls(payer, [approveCall(drainer.address, maxUint256)]);
  await env.testClient.setBalance({ address: drainer.address, value: parseEther("1") });
  const drainOp = await signByAccount(
    env,
    await unsignedOp(drainer, [
      {
        to: LOCAL_TEST_TOKEN_ADDRESS,
        data: encodeFunctionData({
          ...token,
          functionName: "transferFrom",
          args: [payer.address, drainer.address, await tokenBalance(payer.address)],
        }),
      },
    ]),
    privateKeyToAccount(drainer.ownerKey),
  );
  const { op } = await tokenOp(payer, [transferCall(freshAddress(), 0n)]);
  const depositBefore = await deposit();

  const receipt = await handleOps(env, [drainOp, op]);
  assert.equal(operationEvent(receipt, drainer.address).success, true);
  const event = operationEvent(receipt, payer.address);
  assert.equal(event.success, false);
  const { charged, failed } = paymasterEvents(receipt);
  assert.equal(charged.length, 0);
  const record = failed[0]?.args;
  assert.ok(record);
  assert.deepEqual(
    [record.sender, record.feeToken, record.userOpHash],
    [payer.address, LOCAL_TEST_TOKEN_ADDRESS, event.userOpHash],
  );
  assert.equal(record.amount, tokenAmountForWei(record.gasCost, RATE, MARKUP));
  // What the owner's deposit lost: this one operation's gas, within the gas limits and fees the service signed.
  const loss = depositBefore - (await deposit());
  assert.equal(loss, event.actualGasCost);
  assert.ok(loss <= maxGasCostWithPaymaster(op), `lost ${loss}, signed maxCost ${maxGasCostWithPaymaster(op)}`);
  assert.equal(await tokenBalance(paymaster.address), 0n);
});

test("with allowanceRequired off, an approve in the same batch pays; a reverted batch is recorded as unpaid", async () => {
  const account = await newAccount({ approve: 0n });
  const recipient = freshAddress();
  const probe = await tokenOp(account, [transferCall(recipient, 1n)]);
  const approval = maxTokenCost(probe.op, RATE, MARKUP);
  const batch = [approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, approval), transferCall(recipient, TOKENS(2n))];
  const { op } = await tokenOp(account, batch);
  assert.deepEqual(await failedOpOf(env, [op]), {
    errorName: "FailedOp",
    args: [0n, AA33("fee token allowance below the maximum charge")],
  });

  const changed = await send(anvilKeys.owner, { ...paymaster, functionName: "setAllowanceRequired", args: [false] });
  assert.deepEqual(
    parseEventLogs({ abi: paymaster.abi, logs: changed.logs, eventName: "AllowanceRequiredChanged" })[0]?.args,
    {
      required: false,
    },
  );
  const receipt = await handleOps(env, [op]);
  assert.equal(operationEvent(receipt, account.address).success, true);
  const charge = paymasterEvents(receipt).charged[0]?.args;
  assert.ok(charge);
  assert.equal(await tokenBalance(recipient), TOKENS(2n));
  assert.equal(await allowance(account.address), approval - charge.amount);

  // The call reverts (a transfer beyond the balance), which undoes its approve: nothing left to pull the charge with.
  const reverting = await tokenOp(account, [
    approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, approval),
    transferCall(recipient, TOKENS(1_000_000n)),
  ]);
  await ownerCalls(account, [approveCall(LOCAL_TOKEN_PAYMASTER_ADDRESS, 0n)]);
  const depositBefore = await deposit();
  const failedReceipt = await handleOps(env, [reverting.op]);
  const event = operationEvent(failedReceipt, account.address);
  assert.equal(event.success, false);
  const { charged, failed } = paymasterEvents(failedReceipt);
  assert.equal(charged.length, 0);
  assert.ok(failed[0]);
  const loss = depositBefore - (await deposit());
  assert.equal(loss, event.actualGasCost);
  assert.ok(loss <= maxGasCostWithPaymaster(reverting.op));
});

test("only the owner changes the signer set, sets the price age and allowance rule, and moves tokens, deposit and stake", async () => {
  const stranger = anvilKeys.stranger;
  const strangerAddress = privateKeyToAccount(stranger).address;
  const attempts = [
    { functionName: "addSigner", args: [strangerAddress] },
    { functionName: "removeSigner", args: [serviceSigner.address] },
    { functionName: "setMaxPriceAge", args: [1] },
    { functionName: "setAllowanceRequired", args: [false] },
    { functionName: "withdrawToken", args: [LOCAL_TEST_TOKEN_ADDRESS, strangerAddress, 1n] },
    { functionName: "withdrawTo", args: [strangerAddress, 1n] },
    { functionName: "addStake", args: [86_400] },
    { functionName: "unlockStake", args: [] },
    { functionName: "withdrawStake", args: [strangerAddress] },
  ] as const;
  for (const attempt of attempts) {
    const outcome = await revertOf(
      env.publicClient.simulateContract({
        ...paymaster,
        ...(attempt as { functionName: "setMaxPriceAge"; args: [number] }),
        account: strangerAddress,
      }),
    );
    assert.deepEqual(outcome, OWNABLE, attempt.functionName);
  }
  assert.deepEqual(
    await revertOf(
      env.publicClient.readContract({
        ...paymaster,
        functionName: "renounceOwnership",
        account: privateKeyToAccount(anvilKeys.owner).address,
      }),
    ),
    { errorName: "Error", args: ["TokenPaymaster: ownership cannot be renounced"] },
  );

  // Anyone may add to the deposit; the owner takes ether and collected tokens out.
  const before = await deposit();
  await send(stranger, { ...paymaster, functionName: "deposit", args: [], value: parseEther("1") });
  assert.equal((await deposit()) - before, parseEther("1"));
  const target = freshAddress();
  await send(anvilKeys.owner, { ...paymaster, functionName: "withdrawTo", args: [target, parseEther("0.5")] });
  assert.equal(await env.publicClient.getBalance({ address: target }), parseEther("0.5"));

  const account = await newAccount();
  const { op } = await tokenOp(account, [transferCall(freshAddress(), 1n)]);
  await handleOps(env, [op]);
  const collected = await tokenBalance(paymaster.address);
  assert.ok(collected > 0n);
  const withdrawn = await send(anvilKeys.owner, {
    ...paymaster,
    functionName: "withdrawToken",
    args: [LOCAL_TEST_TOKEN_ADDRESS, target, collected],
  });
  assert.deepEqual(
    parseEventLogs({ abi: paymaster.abi, logs: withdrawn.logs, eventName: "TokensWithdrawn" })[0]?.args,
    {
      token: LOCAL_TEST_TOKEN_ADDRESS,
      to: target,
      amount: collected,
    },
  );
  assert.equal(await tokenBalance(target), collected);

  // Staking, as ERC-7562 asks of a paymaster reading the token's storage.
  await send(anvilKeys.owner, {
    ...paymaster,
    functionName: "addStake",
    args: [86_400],
    value: parseEther("1"),
  });

  // Signer rotation: with the new key added, what the old key signed before is still mined; once the old key is
  // removed, what it signs fails the signature (AA34) and the new key's operations pass.
  const signedBeforeRotation = await tokenOp(account, [transferCall(freshAddress(), 1n)]);
  const newSigner = createSigner(generatePrivateKey());
  const added = await send(anvilKeys.owner, { ...paymaster, functionName: "addSigner", args: [newSigner.address] });
  assert.deepEqual(parseEventLogs({ abi: paymaster.abi, logs: added.logs, eventName: "SignerAdded" })[0]?.args, {
    signer: newSigner.address,
  });
  assert.equal(operationEvent(await handleOps(env, [signedBeforeRotation.op]), account.address).success, true);
  const removed = await send(anvilKeys.owner, {
    ...paymaster,
    functionName: "removeSigner",
    args: [serviceSigner.address],
  });
  assert.deepEqual(parseEventLogs({ abi: paymaster.abi, logs: removed.logs, eventName: "SignerRemoved" })[0]?.args, {
    signer: serviceSigner.address,
  });
  const signedByOld = await tokenOp(account, [transferCall(freshAddress(), 1n)]);
  assert.deepEqual(await failedOpOf(env, [signedByOld.op]), { errorName: "FailedOp", args: [0n, AA34] });
  const signedByNew = await tokenOp(account, [transferCall(freshAddress(), 1n)], { signer: newSigner });
  assert.equal(operationEvent(await handleOps(env, [signedByNew.op]), account.address).success, true);
});

test("the EntryPoint alone may call the paymaster's hooks", async () => {
  const account = await newAccount();
  const { op } = await tokenOp(account, [transferCall(freshAddress(), 1n)]);
  const from = privateKeyToAccount(anvilKeys.stranger).address;
  const notEntryPoint = { errorName: "Error", args: ["TokenPaymaster: sender not EntryPoint"] };
  assert.deepEqual(
    await revertOf(
      env.publicClient.readContract({
        ...paymaster,
        functionName: "validatePaymasterUserOp",
        args: [op, `0x${"00".repeat(32)}`, 1n],
        account: from,
      }),
    ),
    notEntryPoint,
  );
  assert.deepEqual(
    await revertOf(
      env.publicClient.simulateContract({ ...paymaster, functionName: "postOp", args: [0, "0x", 1n], account: from }),
    ),
    notEntryPoint,
  );
});
