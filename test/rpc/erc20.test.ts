// ERC20 mode in front of anvil with the token stack deployed (the local chain's own preparation, src/devChain/localTokens.ts):
// fee quotes and their selection (preferredToken, tokenList, all), the signed 278-byte paymasterAndData with gas as
// given or estimated, the two price sources (a fixed rate; an aggregator read through the chain's RPC), and every
// refusal: a missing, zero or unsupported fee token, and a zero, unfinished, stale or unreadable price.
import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, test } from "node:test";
import {
  type Address,
  encodeAbiParameters,
  formatUnits,
  getContractAddress,
  type Hex,
  recoverMessageAddress,
  size,
  zeroAddress,
} from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import { maxChargeWei } from "../../src/bindings/entryPoints/prefund";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { TOKEN_POSTOP_MIN_VERIFICATION_GAS } from "../../src/bindings/paymasters/token";
import { fixedPriceAggregatorArtifact, testTokenArtifact } from "../../src/bindings/paymasters/tokenArtifacts";
import {
  decodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  maxTokenCost,
  PRICE_SOURCE,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import type { ChainConfig, TokenConfig } from "../../src/config";
import { LOCAL_TOKENS, prepareLocalTokenStack } from "../../src/devChain/localTokens";
import {
  LOCAL_PRICE,
  LOCAL_PRICE_AGGREGATOR_ADDRESS,
  LOCAL_TOKEN_PAYMASTER_ADDRESS,
  mintTestTokens,
} from "../../src/devChain/tokenDeployment";
import { withWorstCaseSignatures } from "../../src/gasEstimation/gasEstimationStub";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys, newAccountOperation, type Sponsored, startSponsoredChain } from "../contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { rpc } from "../helpers/dappSetup";
import { sentFieldsV06, withAnsweredGas } from "../helpers/userOps";

const CHAIN_ID = 31337;
/** 2,500 eighteen-decimal OTH per ether, as a fixed rate. */
const OTHER_RATE = 2_500n * 10n ** 18n;
const TUSD = LOCAL_TOKENS[0] as TokenConfig;
const UNKNOWN_TOKEN = "0x00000000000000000000000000000000000000aa";
const LOGO = "https://example.com/oth.png";
/** The aggregator's 3,000 ETH/TUSD as the contract converts it: TUSD base units per 1e18 wei. */
const TUSD_RATE = (LOCAL_PRICE.answer * 10n ** 6n) / 10n ** 8n;

let env: Sponsored;
let otherToken: Address;
const apps: TestApp[] = [];
let main: { t: TestApp; dapp: Dapp };
let snapshot: Hex;

type Reply = Awaited<ReturnType<typeof rpc>>;

/** A service whose chain 31337 has the token paymaster and `tokens`. */
async function service(tokens: TokenConfig[] | undefined, chain: Partial<ChainConfig> = {}) {
  const t = await startTestApp({
    signer: env.serviceSigner,
    chains: new Map([
      [
        CHAIN_ID,
        {
          chainId: CHAIN_ID,
          name: "local",
          rpcUrl: env.anvil.rpcUrl,
          verifyingPaymaster: env.paymaster,
          tokenPaymaster: LOCAL_TOKEN_PAYMASTER_ADDRESS,
          ...(tokens ? { tokens } : {}),
          ...chain,
        },
      ],
    ]),
  });
  apps.push(t);
  return { t, dapp: await t.dapp() };
}

function otherTokenConfig(): TokenConfig {
  return {
    address: otherToken.toLowerCase(),
    symbol: "OTH",
    decimals: 18,
    logoUrl: LOGO,
    price: { fixedRate: OTHER_RATE },
    markup: 1_250_000,
  };
}

before(async () => {
  env = await startSponsoredChain({ chainId: CHAIN_ID });
  await prepareLocalTokenStack(env.clients(anvilKeys.owner), env.serviceSigner.address);
  // A second fee token, priced by a fixed rate in the configuration.
  const wallet = env.wallet(anvilKeys.owner);
  const nonce = await env.publicClient.getTransactionCount({ address: wallet.account.address });
  const hash = await wallet.deployContract({
    abi: testTokenArtifact.abi,
    bytecode: testTokenArtifact.bytecode,
    args: ["Other", "OTH", 18],
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
  otherToken = getContractAddress({ from: wallet.account.address, nonce: BigInt(nonce) });
  main = await service([TUSD, otherTokenConfig()]);
});

after(async () => {
  try {
    for (const t of apps) await t.close();
  } finally {
    await env?.anvil.stop();
  }
});

beforeEach(async () => {
  snapshot = await env.testClient.snapshot();
});
afterEach(async () => {
  await env.testClient.revert({ id: snapshot });
});

const BASE_FIELDS: (keyof UserOperation)[] = ["sender", "nonce", "initCode", "callData"];

/** A fresh account's first operation; its sender holds 1,000 of each fee token unless told otherwise. */
async function operation(funded = true): Promise<UserOperation> {
  const { op } = await newAccountOperation(env, { to: zeroAddress, value: 0n });
  if (funded) {
    const owner = env.clients(anvilKeys.owner);
    await mintTestTokens(owner, op.sender, 1_000n * 10n ** 6n);
    await mintTestTokens(owner, op.sender, 1_000n * 10n ** 18n, otherToken);
  }
  return op;
}

async function quote(op: UserOperation, mode: Record<string, unknown>, app = main, method = "pm_getFeeQuoteOrData") {
  return rpc(app.t, app.dapp, method, [sentFieldsV06(op), { mode: "ERC20", ...mode }]);
}

async function sponsorErc20(op: Record<string, unknown>, mode: Record<string, unknown>, app = main): Promise<Reply> {
  return rpc(app.t, app.dapp, "pm_sponsorUserOperation", [op, { mode: "ERC20", ...mode }]);
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

async function setPrice(answer: bigint, updatedAt: number): Promise<void> {
  const hash = await env.wallet(anvilKeys.owner).writeContract({
    address: LOCAL_PRICE_AGGREGATOR_ADDRESS,
    abi: fixedPriceAggregatorArtifact.abi,
    functionName: "setRoundData",
    args: [answer, BigInt(updatedAt)],
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
}

function refused(reply: Reply, message: RegExp) {
  assert.equal(reply.status, 400, JSON.stringify(reply.body));
  assert.equal(reply.body.error?.code, -32602, JSON.stringify(reply.body));
  assert.match(reply.body.error.message, message);
}

test("a quote of every token when tokenInfo names none: the contract's maximum, rate, markup, window and logo", async () => {
  const op = await operation();
  const before = nowSeconds();
  const reply = await quote(op, { calculateGasLimits: false });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result;
  assert.equal(result.mode, "ERC20");
  assert.equal(result.MODE, "ERC20");
  assert.equal(result.paymasterAddress, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.deepEqual(result.unsupportedTokens, []);
  assert.equal(result.feeQuotes.length, 2);
  const [tusd, oth] = result.feeQuotes;

  const tusdMax = maxTokenCost(op, TUSD_RATE, 1_100_000);
  assert.deepEqual(
    { ...tusd, validUntil: undefined },
    {
      symbol: "TUSD",
      decimal: 6,
      tokenAddress: TUSD.address,
      maxGasFee: Number(formatUnits(tusdMax, 6)),
      maxGasFeeUSD: Number(formatUnits(tusdMax, 6)),
      exchangeRate: Number(TUSD_RATE),
      premiumPercentage: "10",
      validUntil: undefined,
      logoUrl: null,
    },
  );
  assert.ok(tusd.validUntil >= before + 300 && tusd.validUntil <= nowSeconds() + 300, String(tusd.validUntil));
  // What an SDK approves from the quote (Math.ceil(maxGasFee * 10^decimal)) is the contract's maximum, to the unit.
  assert.equal(BigInt(Math.ceil(tusd.maxGasFee * 10 ** tusd.decimal)), tusdMax);

  const othMax = maxTokenCost(op, OTHER_RATE, 1_250_000);
  assert.equal(oth.symbol, "OTH");
  assert.equal(oth.decimal, 18);
  assert.equal(oth.tokenAddress, otherToken.toLowerCase());
  assert.equal(oth.maxGasFee, Number(formatUnits(othMax, 18)));
  assert.equal(oth.maxGasFeeUSD, null, "no usdPrice configured");
  assert.equal(oth.exchangeRate, Number(OTHER_RATE));
  assert.equal(oth.premiumPercentage, "25");
  assert.equal(oth.logoUrl, LOGO);
});

test("preferredToken quotes that token only; tokenList quotes the supported ones and lists the others", async () => {
  const op = await operation();
  const preferred = await quote(op, {
    tokenInfo: { preferredToken: otherToken, tokenList: [TUSD.address] },
  });
  assert.equal(preferred.status, 200, JSON.stringify(preferred.body));
  assert.deepEqual(
    preferred.body.result.feeQuotes.map((q: { symbol: string }) => q.symbol),
    ["OTH"],
  );
  assert.deepEqual(preferred.body.result.unsupportedTokens, []);

  // SDKs send empty strings for what they leave out; an address may come in any case, and twice.
  const listed = await quote(op, {
    tokenInfo: {
      preferredToken: "",
      tokenList: ["", UNKNOWN_TOKEN, TUSD.address.toUpperCase().replace("0X", "0x"), TUSD.address],
    },
  });
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.deepEqual(
    listed.body.result.feeQuotes.map((q: { tokenAddress: string }) => q.tokenAddress),
    [TUSD.address],
  );
  assert.deepEqual(listed.body.result.unsupportedTokens, [UNKNOWN_TOKEN]);

  const unsupported = await quote(op, { tokenInfo: { preferredToken: UNKNOWN_TOKEN } });
  assert.equal(unsupported.status, 200);
  assert.deepEqual(unsupported.body.result.feeQuotes, []);
  assert.deepEqual(unsupported.body.result.unsupportedTokens, [UNKNOWN_TOKEN]);

  const misspelled = await quote(op, { tokenInfo: { tokenList: [otherToken] } }, main, "pm_getFeeQuotesOrData");
  assert.deepEqual(
    misspelled.body.result.feeQuotes.map((q: { symbol: string }) => q.symbol),
    ["OTH"],
  );

  refused(
    await quote(op, { tokenInfo: { preferredToken: "0x1234" } }),
    /preferredToken must be a token address.*0x1234/,
  );
  refused(await quote(op, { tokenInfo: { tokenList: "0xabc" } }), /tokenList must be an array/);
  refused(await quote(op, { tokenInfo: { tokenList: [TUSD.address, 7] } }), /tokenList\[1\] must be a token address/);
});

test("a quote without gas fields estimates them with the token paymaster's stub; without calculateGasLimits it asks for them", async () => {
  const op = await operation();
  const reply = await rpc(main.t, main.dapp, "pm_getFeeQuoteOrData", [
    sentFieldsV06(op, BASE_FIELDS),
    { mode: "ERC20", calculateGasLimits: true, tokenInfo: { preferredToken: TUSD.address } },
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const [tusd] = reply.body.result.feeQuotes;
  assert.ok(tusd.maxGasFee > 0 && tusd.maxGasFee < 100, `a few TUSD at most on anvil: ${tusd.maxGasFee}`);

  // A sender that holds one of the tokens only: the other cannot pay, and is listed as such; none at all is an error.
  const onlyOth = await operation(false);
  await mintTestTokens(env.clients(anvilKeys.owner), onlyOth.sender, 10n ** 18n, otherToken);
  const partial = await rpc(main.t, main.dapp, "pm_getFeeQuoteOrData", [
    sentFieldsV06(onlyOth, BASE_FIELDS),
    { mode: "ERC20", calculateGasLimits: true },
  ]);
  assert.equal(partial.status, 200, JSON.stringify(partial.body));
  assert.deepEqual(
    partial.body.result.feeQuotes.map((q: { symbol: string }) => q.symbol),
    ["OTH"],
  );
  assert.deepEqual(partial.body.result.unsupportedTokens, [TUSD.address]);
  refused(
    await rpc(main.t, main.dapp, "pm_getFeeQuoteOrData", [
      sentFieldsV06(await operation(false), BASE_FIELDS),
      { mode: "ERC20", calculateGasLimits: true },
    ]),
    /Gas estimation failed: the operation fails validation: AA33 reverted: TokenPaymaster: fee token balance below/,
  );

  refused(
    await rpc(main.t, main.dapp, "pm_getFeeQuoteOrData", [sentFieldsV06(op, BASE_FIELDS), { mode: "ERC20" }]),
    /params\[0\] is missing callGasLimit, verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas: the quote prices the gas values/,
  );
});

test("sponsoring with the aggregator's price: the oracle source, signed by the service over the gas as given, and recorded", async () => {
  const op = await operation();
  const reply = await sponsorErc20(sentFieldsV06(op), {
    calculateGasLimits: false,
    tokenInfo: { feeTokenAddress: TUSD.address },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result;
  assert.deepEqual(Object.keys(result).sort(), [
    "MODE",
    "callGasLimit",
    "mode",
    "paymasterAndData",
    "preVerificationGas",
    "verificationGasLimit",
  ]);
  assert.equal(result.mode, "ERC20");
  assert.equal(result.preVerificationGas, op.preVerificationGas.toString());
  assert.equal(result.callGasLimit, Number(op.callGasLimit));
  assert.equal(size(result.paymasterAndData), TOKEN_PAYMASTER_AND_DATA_LENGTH);
  const data = decodeTokenPaymasterAndData(result.paymasterAndData);
  assert.equal(data.paymaster, LOCAL_TOKEN_PAYMASTER_ADDRESS);
  assert.equal(data.priceSource, PRICE_SOURCE.oracle);
  assert.equal(data.feeToken.toLowerCase(), TUSD.address);
  assert.equal(data.oracleAggregator, LOCAL_PRICE_AGGREGATOR_ADDRESS);
  assert.equal(data.exchangeRate, TUSD_RATE);
  assert.equal(data.priceMarkup, 1_100_000);
  const hash = getTokenPaymasterHash(op, { ...data, chainId: CHAIN_ID });
  assert.equal(
    await recoverMessageAddress({ message: { raw: hash }, signature: data.signature }),
    env.serviceSigner.address,
  );

  const [record] = await listSponsorships(main.t.db, main.dapp.paymasterId);
  assert.equal(record?.sponsored, true);
  assert.equal(Number(record?.valid_until), data.validUntil);
  assert.deepEqual(record?.rule_outcomes, [
    {
      rule: "ERC20",
      passed: true,
      feeToken: TUSD.address,
      symbol: "TUSD",
      decimals: 6,
      priceSource: 1,
      exchangeRate: TUSD_RATE.toString(),
      priceMarkup: 1_100_000,
      maxTokenCost: maxTokenCost(op, TUSD_RATE, 1_100_000).toString(),
    },
  ]);
  // The ledger shows it in ERC20 mode, with its EntryPoint and worst case.
  const ledger = await main.t.call("GET", "sponsorships", { token: main.dapp.token, apiKey: main.dapp.apiKey });
  const [row] = ledger.body.data as Record<string, unknown>[];
  assert.deepEqual(
    { mode: row?.mode, entryPoint: row?.entryPoint, worstCaseWei: row?.worstCaseWei, status: row?.status },
    {
      mode: "ERC20",
      entryPoint: ENTRY_POINT_V06_ADDRESS.toLowerCase(),
      worstCaseWei: maxChargeWei(op).toString(),
      status: "pending",
    },
  );
  // And the token amounts: the most it can be charged, in TUSD base units; the charge and refund once mined.
  assert.deepEqual(row?.token, {
    feeToken: TUSD.address,
    symbol: "TUSD",
    decimals: 6,
    maxCharge: maxTokenCost(op, TUSD_RATE, 1_100_000).toString(),
    charge: null,
    refund: null,
  });
});

test("sponsoring with a fixed rate: the rate is signed as configured, with no aggregator", async () => {
  const op = await operation();
  const reply = await sponsorErc20(sentFieldsV06(op), {
    tokenInfo: { feeTokenAddress: otherToken },
    expiryDuration: 60,
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const data = decodeTokenPaymasterAndData(reply.body.result.paymasterAndData);
  assert.equal(data.priceSource, PRICE_SOURCE.exchangeRate);
  assert.equal(data.exchangeRate, OTHER_RATE);
  assert.equal(data.oracleAggregator, zeroAddress);
  assert.equal(data.priceMarkup, 1_250_000);
  assert.ok(Math.abs(data.validUntil - (nowSeconds() + 60)) <= 2, "expiryDuration applies");
  const hash = getTokenPaymasterHash(op, { ...data, chainId: CHAIN_ID });
  assert.equal(
    await recoverMessageAddress({ message: { raw: hash }, signature: data.signature }),
    env.serviceSigner.address,
  );
});

test("sponsoring without gas fields: estimated with the 278-byte stub, raised to the postOp floor, fees chosen and returned", async () => {
  const op = await operation();
  const reply = await sponsorErc20(sentFieldsV06(op, BASE_FIELDS), {
    calculateGasLimits: true,
    tokenInfo: { feeTokenAddress: TUSD.address },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const result = reply.body.result;
  assert.ok(result.verificationGasLimit >= Number(TOKEN_POSTOP_MIN_VERIFICATION_GAS));
  assert.ok(result.callGasLimit > 0 && BigInt(result.preVerificationGas) > 40_000n, JSON.stringify(result));
  assert.match(result.maxFeePerGas, /^0x[0-9a-f]+$/);
  const signed = withAnsweredGas(op, result);
  const data = decodeTokenPaymasterAndData(result.paymasterAndData);
  const hash = getTokenPaymasterHash(signed, { ...data, chainId: CHAIN_ID });
  assert.equal(
    await recoverMessageAddress({ message: { raw: hash }, signature: data.signature }),
    env.serviceSigner.address,
  );
});

test("a sender without the tokens for the maximum charge is refused before anything is signed", async () => {
  const unfunded = await operation(false);
  refused(
    await sponsorErc20(sentFieldsV06(unfunded), { tokenInfo: { feeTokenAddress: TUSD.address } }),
    /Sender 0x[0-9a-f]{40} holds 0 TUSD of fee token TUSD \(0x[0-9a-f]{40}\), less than the [\d.]+ TUSD this operation can be charged at most/,
  );
  // With calculateGasLimits, the simulation meets the contract's own check first.
  refused(
    await sponsorErc20(sentFieldsV06(unfunded, BASE_FIELDS), {
      calculateGasLimits: true,
      tokenInfo: { feeTokenAddress: TUSD.address },
    }),
    /Gas estimation failed: the operation fails validation: AA33 reverted: TokenPaymaster: fee token balance below the maximum charge/,
  );
});

test("ERC-7677 stub with { token }: a sender who cannot pay even the cheapest completion is refused at the stub", async () => {
  const stubOf = (op: Record<string, unknown>) =>
    rpc(main.t, main.dapp, "pm_getPaymasterStubData", [op, ENTRY_POINT_V06_ADDRESS, "0x7a69", { token: TUSD.address }]);
  const dataOf = (op: Record<string, unknown>) =>
    rpc(main.t, main.dapp, "pm_getPaymasterData", [op, ENTRY_POINT_V06_ADDRESS, "0x7a69", { token: TUSD.address }]);
  const holdsNothing = /^Sender 0x[0-9a-f]{40} holds 0 TUSD of fee token TUSD \(0x[0-9a-f]{40}\), less than the /;
  const unfunded = await operation(false);
  // As viem sends it at the stub (fees, no gas yet): the fees alone already make a charge above nothing.
  refused(
    await stubOf(sentFieldsV06(unfunded, [...BASE_FIELDS, "maxFeePerGas", "maxPriorityFeePerGas"])),
    holdsNothing,
  );
  // With the gas sent, the stub and the final request weigh the same maximum and refuse in the same words.
  const atStub = await stubOf(sentFieldsV06(unfunded));
  refused(atStub, holdsNothing);
  const atFinal = await dataOf(sentFieldsV06(unfunded));
  assert.equal(atFinal.body.error?.message, atStub.body.error?.message);

  const funded = await operation();
  const stub = await stubOf(sentFieldsV06(funded, [...BASE_FIELDS, "maxFeePerGas", "maxPriorityFeePerGas"]));
  assert.equal(stub.status, 200, JSON.stringify(stub.body));
  assert.equal(size(stub.body.result.paymasterAndData as Hex), TOKEN_PAYMASTER_AND_DATA_LENGTH);
});

test("a missing, empty, malformed, zero-address or unsupported fee token: HTTP 400, -32602 naming the token", async () => {
  const op = sentFieldsV06(await operation());
  const accepts = new RegExp(`chain 31337 accepts TUSD \\(${TUSD.address}\\), OTH \\(${otherToken.toLowerCase()}\\)`);
  refused(await sponsorErc20(op, {}), /params\[1\]\.tokenInfo\.feeTokenAddress is required in mode ERC20/);
  refused(await sponsorErc20(op, { tokenInfo: { feeTokenAddress: "" } }), accepts);
  refused(
    await sponsorErc20(op, { tokenInfo: { feeTokenAddress: "usdc" } }),
    /feeTokenAddress must be a token address.*"usdc"/,
  );
  refused(
    await sponsorErc20(op, { tokenInfo: { feeTokenAddress: zeroAddress } }),
    /feeTokenAddress is the zero address, which is no fee token/,
  );
  refused(
    await sponsorErc20(op, { tokenInfo: { feeTokenAddress: UNKNOWN_TOKEN } }),
    new RegExp(`Fee token ${UNKNOWN_TOKEN} is not supported \\(chain 31337 accepts TUSD`),
  );
  refused(
    await sponsorErc20(op, { tokenInfo: { feeTokenAddress: TUSD.address }, expiryDuration: 0 }),
    /expiryDuration/,
  );

  // A chain without fee tokens refuses the mode itself.
  const none = await service(undefined);
  refused(
    await sponsorErc20(op, { tokenInfo: { feeTokenAddress: TUSD.address } }, none),
    /mode ERC20 is not available on chain 31337 \(local\): no token paymaster is configured/,
  );
  refused(await quote(await operation(), {}, none), /mode ERC20 is not available/);
});

test("a zero, negative or unfinished oracle price is refused, never signed", async () => {
  const op = sentFieldsV06(await operation());
  const mode = { tokenInfo: { feeTokenAddress: TUSD.address } };
  const recordsBefore = (await listSponsorships(main.t.db, main.dapp.paymasterId)).length;
  await setPrice(0n, nowSeconds());
  refused(
    await sponsorErc20(op, mode),
    /TUSD \(0x[0-9a-f]{40}\) cannot be priced: the TUSD price feed 0x[0-9a-fA-F]{40} answers 0, not a price/,
  );
  await setPrice(-5n, nowSeconds());
  refused(await sponsorErc20(op, mode), /answers -5, not a price/);
  await setPrice(LOCAL_PRICE.answer, 0);
  refused(await sponsorErc20(op, mode), /the latest round of the TUSD price feed .* is not complete/);
  const records = await listSponsorships(main.t.db, main.dapp.paymasterId);
  assert.equal(records.length, recordsBefore, "nothing was signed");
});

test("a stale oracle price is refused; the contract's maxPriceAge and the configured maxAgeSeconds both count", async () => {
  const op = await operation();
  const mode = { tokenInfo: { feeTokenAddress: TUSD.address } };
  // Older than the contract's maxPriceAge (one day).
  await setPrice(LOCAL_PRICE.answer, nowSeconds() - 86_400 - 60);
  refused(
    await sponsorErc20(sentFieldsV06(op), mode),
    /TUSD price feed .* is stale \(updated \d+ s ago, at most 86400 s allowed\)/,
  );

  // A quote of every token leaves the stale one out and quotes the others; a quote of that token alone is refused.
  const all = await quote(op, {});
  assert.equal(all.status, 200, JSON.stringify(all.body));
  assert.deepEqual(
    all.body.result.feeQuotes.map((q: { symbol: string }) => q.symbol),
    ["OTH"],
  );
  assert.deepEqual(all.body.result.unsupportedTokens, [TUSD.address]);
  refused(await quote(op, { tokenInfo: { preferredToken: TUSD.address } }), /is stale/);

  // Fresh for the contract, stale for a configuration that allows 10 minutes.
  const priceSetAt = nowSeconds() - 700;
  await setPrice(LOCAL_PRICE.answer, priceSetAt);
  assert.equal((await sponsorErc20(sentFieldsV06(op), mode)).status, 200);
  const strict = await service([
    { ...TUSD, price: { aggregator: LOCAL_PRICE_AGGREGATOR_ADDRESS, maxAgeSeconds: 600 } },
  ]);
  const staleReply = await sponsorErc20(sentFieldsV06(op), mode, strict);
  refused(staleReply, /is stale \(updated \d+ s ago, at most 600 s allowed\)/);
  // The age is the price's real one: 700 s when it was set, plus however long this test has run since (under load,
  // seconds), never less.
  const age = Number(/updated (\d+) s ago/.exec(staleReply.body.error.message)?.[1]);
  assert.ok(age >= 700 && age <= nowSeconds() - priceSetAt, `age ${age} s`);

  // A price that ages out before the requested expiry cuts the signed window (as the contract would).
  const updatedAt = nowSeconds() - 500;
  await setPrice(LOCAL_PRICE.answer, updatedAt);
  const cut = await sponsorErc20(sentFieldsV06(op), mode, strict);
  assert.equal(cut.status, 200, JSON.stringify(cut.body));
  assert.equal(decodeTokenPaymasterAndData(cut.body.result.paymasterAndData).validUntil, updatedAt + 600);
  const quoted = await quote(op, {}, strict);
  assert.equal(quoted.body.result.feeQuotes[0].validUntil, updatedAt + 600);
});

test("a configuration whose decimals differ from the token's, or an unreachable node: refused, retryable only for the node", async () => {
  const op = sentFieldsV06(await operation());
  const mode = { tokenInfo: { feeTokenAddress: TUSD.address } };
  const wrong = await service([{ ...TUSD, decimals: 18 }]);
  refused(await sponsorErc20(op, mode, wrong), /the token has 6 decimals on chain, the configuration says 18/);

  const unreachable = await service([TUSD], { rpcUrl: "http://127.0.0.1:1" });
  const reply = await sponsorErc20(op, mode, unreachable);
  assert.equal(reply.status, 503, JSON.stringify(reply.body));
  assert.equal(reply.body.error.code, -32002);
  assert.match(reply.body.error.message, /TUSD .* cannot be priced now: reading the TUSD price feed .* failed/);

  // A fixed rate needs no node: signed over the gas as given.
  const fixed = await service([{ ...TUSD, price: { fixedRate: 1234n } }], { rpcUrl: undefined });
  const signed = await sponsorErc20(op, mode, fixed);
  assert.equal(signed.status, 200, JSON.stringify(signed.body));
  assert.equal(decodeTokenPaymasterAndData(signed.body.result.paymasterAndData).exchangeRate, 1234n);
});

test("the preVerificationGas formula prices the token layout's raw 65-byte signature as non-zero, and nothing else", () => {
  const terms = encodeAbiParameters([{ type: "uint256" }], [1_100_000n]);
  const paymasterAndData = `0x${"11".repeat(20)}01${"00".repeat(160)}${terms.slice(2)}${"00".repeat(65)}` as Hex;
  assert.equal(size(paymasterAndData), TOKEN_PAYMASTER_AND_DATA_LENGTH);
  const worst = withWorstCaseSignatures({
    sender: zeroAddress,
    nonce: 0n,
    initCode: "0x",
    callData: "0x",
    callGasLimit: 0n,
    verificationGasLimit: 0n,
    preVerificationGas: 0n,
    maxFeePerGas: 0n,
    maxPriorityFeePerGas: 0n,
    paymasterAndData,
    signature: "0x",
  }).paymasterAndData;
  assert.equal(size(worst), TOKEN_PAYMASTER_AND_DATA_LENGTH);
  assert.equal(worst.slice(0, 2 + 2 * 213), paymasterAndData.slice(0, 2 + 2 * 213), "the terms stay as they are");
  assert.equal(worst.slice(2 + 2 * 213), "ff".repeat(65));
});
