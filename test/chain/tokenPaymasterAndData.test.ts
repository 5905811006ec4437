import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hex,
  keccak256,
  maxUint256,
  size,
  slice,
  zeroAddress,
} from "viem";
import {
  decodeTokenPaymasterAndData,
  encodeTokenPaymasterAndData,
  getTokenPaymasterHash,
  MAX_PRICE_MARKUP,
  MIN_PRICE_MARKUP,
  maxGasCostWithPaymaster,
  maxTokenCost,
  oracleExchangeRate,
  PRICE_SOURCE,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
  TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  type TokenHashContext,
  tokenAmountForWei,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { vectorSignature, vectorUserOp } from "./vector";

const paymaster: Address = "0x00000f7365ca6c59a2c93719ad53d567ed49c14c";
const feeToken: Address = "0xda5289fcaaf71d52a80a254da614a192b693e977";
const oracleAggregator: Address = zeroAddress;

const context: TokenHashContext = {
  chainId: 80002,
  paymaster,
  priceSource: PRICE_SOURCE.exchangeRate,
  validUntil: 1_700_000_300,
  validAfter: 1_700_000_000,
  feeToken,
  oracleAggregator,
  // 3,000 six-decimal tokens per ether.
  exchangeRate: 3_000_000_000n,
  priceMarkup: 1_100_000,
};

test("the hash is keccak256 of the eighteen values of docs/contracts.md, written out here one by one", () => {
  const expected = keccak256(
    encodeAbiParameters(
      [
        "address",
        "uint256",
        "bytes32",
        "bytes32",
        "uint256",
        "uint256",
        "uint256",
        "uint256",
        "uint256",
        "uint256",
        "address",
        "uint8",
        "uint48",
        "uint48",
        "address",
        "address",
        "uint256",
        "uint32",
      ].map((type) => ({ type })),
      [
        vectorUserOp.sender,
        vectorUserOp.nonce,
        keccak256(vectorUserOp.initCode),
        keccak256(vectorUserOp.callData),
        vectorUserOp.callGasLimit,
        vectorUserOp.verificationGasLimit,
        vectorUserOp.preVerificationGas,
        vectorUserOp.maxFeePerGas,
        vectorUserOp.maxPriorityFeePerGas,
        80002n,
        paymaster,
        0,
        1_700_000_300,
        1_700_000_000,
        feeToken,
        oracleAggregator,
        3_000_000_000n,
        1_100_000,
      ],
    ),
  );
  assert.equal(getTokenPaymasterHash(vectorUserOp, context), expected);
});

test("every signed field and every term changes the hash", () => {
  const base = getTokenPaymasterHash(vectorUserOp, context);
  const changedOps = {
    sender: { ...vectorUserOp, sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a5" },
    nonce: { ...vectorUserOp, nonce: 9n },
    initCode: { ...vectorUserOp, initCode: "0x00" },
    callData: { ...vectorUserOp, callData: `${vectorUserOp.callData}00` },
    callGasLimit: { ...vectorUserOp, callGasLimit: vectorUserOp.callGasLimit + 1n },
    verificationGasLimit: { ...vectorUserOp, verificationGasLimit: vectorUserOp.verificationGasLimit + 1n },
    preVerificationGas: { ...vectorUserOp, preVerificationGas: vectorUserOp.preVerificationGas + 1n },
    maxFeePerGas: { ...vectorUserOp, maxFeePerGas: vectorUserOp.maxFeePerGas + 1n },
    maxPriorityFeePerGas: { ...vectorUserOp, maxPriorityFeePerGas: vectorUserOp.maxPriorityFeePerGas + 1n },
  } as const;
  for (const [field, op] of Object.entries(changedOps)) {
    assert.notEqual(getTokenPaymasterHash(op, context), base, field);
  }
  const changedContexts: Record<string, TokenHashContext> = {
    chainId: { ...context, chainId: 80001 },
    paymaster: { ...context, paymaster: "0x00000f7365ca6c59a2c93719ad53d567ed49c14d" },
    priceSource: { ...context, priceSource: PRICE_SOURCE.oracle },
    validUntil: { ...context, validUntil: context.validUntil + 1 },
    validAfter: { ...context, validAfter: context.validAfter + 1 },
    feeToken: { ...context, feeToken: "0xda5289fcaaf71d52a80a254da614a192b693e978" },
    oracleAggregator: { ...context, oracleAggregator: "0x0000000000000000000000000000000000000001" },
    exchangeRate: { ...context, exchangeRate: context.exchangeRate + 1n },
    priceMarkup: { ...context, priceMarkup: context.priceMarkup + 1 },
  };
  const hashes = new Set([base]);
  for (const [field, changed] of Object.entries(changedContexts)) {
    const hash = getTokenPaymasterHash(vectorUserOp, changed);
    assert.ok(!hashes.has(hash), field);
    hashes.add(hash);
  }
});

test("encode lays out 278 bytes at the offsets of docs/contracts.md and decode reverses it", () => {
  const { chainId: _, ...terms } = context;
  const data = { ...terms, priceSource: PRICE_SOURCE.oracle, oracleAggregator: feeToken, signature: vectorSignature };
  const encoded = encodeTokenPaymasterAndData(data);
  assert.equal(size(encoded), TOKEN_PAYMASTER_AND_DATA_LENGTH);
  assert.equal(encoded, encoded.toLowerCase());
  assert.equal(slice(encoded, 0, 20), paymaster.toLowerCase());
  assert.equal(slice(encoded, 20, 21), "0x01");
  // [21:213]: six head words, no dynamic part.
  const word = (i: number) => BigInt(slice(encoded, 21 + 32 * i, 53 + 32 * i));
  assert.equal(word(0), 1_700_000_300n);
  assert.equal(word(1), 1_700_000_000n);
  assert.equal(word(2), BigInt(feeToken));
  assert.equal(word(3), BigInt(feeToken));
  assert.equal(word(4), 3_000_000_000n);
  assert.equal(word(5), 1_100_000n);
  assert.equal(slice(encoded, 213), vectorSignature);

  assert.deepEqual(decodeTokenPaymasterAndData(encoded), {
    ...data,
    paymaster: getAddress(paymaster),
    feeToken: getAddress(feeToken),
    oracleAggregator: getAddress(feeToken),
  });
});

test("encode refuses what the contract would refuse; decode refuses another length or price source", () => {
  const { chainId: _, ...terms } = context;
  const data = { ...terms, signature: vectorSignature };
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, signature: slice(vectorSignature, 0, 64) }), /65 bytes/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, priceMarkup: MIN_PRICE_MARKUP - 1 }), /priceMarkup/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, priceMarkup: MAX_PRICE_MARKUP + 1 }), /priceMarkup/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, priceMarkup: 1_000_000.5 }), /priceMarkup/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, exchangeRate: 0n }), /exchangeRate must not be zero/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, exchangeRate: maxUint256 + 1n }), /uint256/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, validUntil: 2 ** 48 }), /validUntil/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, validAfter: -1 }), /validAfter/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, priceSource: 2 as 0 }), /priceSource/);
  assert.throws(() => encodeTokenPaymasterAndData({ ...data, feeToken: "0x1234" }), /feeToken/);
  assert.throws(() => getTokenPaymasterHash(vectorUserOp, { ...context, priceMarkup: 2_000_001 }), /priceMarkup/);
  // In oracle mode the signed rate is not what the charge uses, so zero is allowed there.
  assert.equal(
    size(encodeTokenPaymasterAndData({ ...data, priceSource: PRICE_SOURCE.oracle, exchangeRate: 0n })),
    TOKEN_PAYMASTER_AND_DATA_LENGTH,
  );

  const encoded = encodeTokenPaymasterAndData(data);
  assert.throws(() => decodeTokenPaymasterAndData(slice(encoded, 0, 277)), /278 bytes/);
  assert.throws(() => decodeTokenPaymasterAndData(concat([encoded, "0x00"])), /278 bytes/);
  const otherSource = concat([slice(encoded, 0, 20), "0x02", slice(encoded, 21)]) as Hex;
  assert.throws(() => decodeTokenPaymasterAndData(otherSource), /priceSource/);
});

test("token amounts round up, and the maximum is maxCost plus the overhead at maxFeePerGas", () => {
  // 1e18 wei at 3,000 tokens (6 decimals) per ether, no markup: 3,000e6 base units exactly.
  assert.equal(tokenAmountForWei(10n ** 18n, 3_000_000_000n, MIN_PRICE_MARKUP), 3_000_000_000n);
  assert.equal(tokenAmountForWei(10n ** 18n, 3_000_000_000n, MAX_PRICE_MARKUP), 6_000_000_000n);
  // One wei is worth 3e-9 base units: the charge is one unit, never zero.
  assert.equal(tokenAmountForWei(1n, 3_000_000_000n, MIN_PRICE_MARKUP), 1n);
  assert.equal(tokenAmountForWei(0n, 3_000_000_000n, MIN_PRICE_MARKUP), 0n);

  const op = { callGasLimit: 100_000n, verificationGasLimit: 200_000n, preVerificationGas: 50_000n, maxFeePerGas: 10n };
  assert.equal(maxGasCostWithPaymaster(op), 750_000n * 10n);
  const maxWei = 750_000n * 10n + TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * 10n;
  assert.equal(maxTokenCost(op, 10n ** 18n, 1_500_000), (maxWei * 3n) / 2n);
});

test("an oracle answer becomes base units per 1e18 wei; a non-positive answer has no rate", () => {
  // ETH/USD 3,000 with 8 decimals, for a 6-decimal and an 18-decimal token.
  assert.equal(oracleExchangeRate(3_000n * 10n ** 8n, 8, 6), 3_000n * 10n ** 6n);
  assert.equal(oracleExchangeRate(3_000n * 10n ** 8n, 8, 18), 3_000n * 10n ** 18n);
  // More aggregator decimals than token decimals round down.
  assert.equal(oracleExchangeRate(123_456_789n, 8, 2), 123n);
  assert.throws(() => oracleExchangeRate(0n, 8, 6), /positive/);
  assert.throws(() => oracleExchangeRate(-1n, 8, 6), /positive/);
});
