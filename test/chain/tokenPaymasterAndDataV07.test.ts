// The v0.7/v0.8 token layout, hash and charge arithmetic in isolation; test/contracts/v07/tokenPaymasterV07.test.ts pins
// the hash and the amounts to the contract itself on the real EntryPoints.
import assert from "node:assert/strict";
import { test } from "node:test";
import { concat, encodeAbiParameters, getAddress, type Hex, hexToBigInt, keccak256, size, slice } from "viem";
import {
  type PackedUserOperationSignedFields,
  packAccountGasLimits,
  packGasFees,
  packInitCode,
} from "../../src/bindings/entryPoints/packedUserOperation";
import {
  encodeTokenPaymasterAndData,
  encodeTokenPaymasterData,
  PRICE_SOURCE,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";
import {
  decodeTokenPaymasterAndDataV07,
  encodeTokenPaymasterAndDataV07,
  getTokenPaymasterHashV07,
  maxGasCostV07,
  maxTokenCostV07,
  TOKEN_PAYMASTER_AND_DATA_V07_LENGTH,
  TOKEN_PAYMASTER_V07_POST_OP_OVERHEAD_GAS,
  type TokenHashContextV07,
  type TokenPaymasterDataV07,
  tokenChargeV07,
} from "../../src/bindings/paymasters/tokenPaymasterAndDataV07";

const signature: Hex = `0x${"ab".repeat(64)}1b`;
const data: TokenPaymasterDataV07 = {
  paymaster: "0x00000f7365ca6c59a2c93719ad53d567ed49c14c",
  paymasterVerificationGasLimit: 50_000n,
  paymasterPostOpGasLimit: 50_000n,
  priceSource: PRICE_SOURCE.exchangeRate,
  validUntil: 1_700_000_300,
  validAfter: 1_700_000_000,
  feeToken: "0xda5289fcaaf71d52a80a254da614a192b693e977",
  oracleAggregator: "0x0000000000000000000000000000000000000000",
  exchangeRate: 3_000_000_000n,
  priceMarkup: 1_100_000,
  signature,
};
const op: PackedUserOperationSignedFields = {
  sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4",
  nonce: 7n,
  initCode: packInitCode("0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985", "0x5fbfb9cf"),
  callData: "0xb61d27f6",
  accountGasLimits: packAccountGasLimits({ verificationGasLimit: 500_000n, callGasLimit: 100_000n }),
  preVerificationGas: 50_000n,
  gasFees: packGasFees({ maxPriorityFeePerGas: 1_000_000_000n, maxFeePerGas: 3_000_000_000n }),
};
const { signature: _signature, ...terms } = data;
const context: TokenHashContextV07 = { ...terms, chainId: 4337 };

test("paymasterAndData is address, the two gas limits, then the v0.6 token data after its address (310 bytes)", () => {
  const encoded = encodeTokenPaymasterAndDataV07(data);
  assert.equal(size(encoded), TOKEN_PAYMASTER_AND_DATA_V07_LENGTH);
  assert.equal(TOKEN_PAYMASTER_AND_DATA_V07_LENGTH, 310);
  assert.equal(encoded, encoded.toLowerCase());
  assert.equal(slice(encoded, 0, 20), data.paymaster);
  assert.equal(hexToBigInt(slice(encoded, 20, 36)), 50_000n);
  assert.equal(hexToBigInt(slice(encoded, 36, 52)), 50_000n);
  assert.equal(slice(encoded, 52), encodeTokenPaymasterData(data));
  // The same bytes the v0.6 contract reads after its 20-byte address: price source, six terms words, raw signature.
  assert.equal(slice(encoded, 52), slice(encodeTokenPaymasterAndData(data), 20));
  assert.equal(slice(encoded, 245), signature);
  assert.deepEqual(decodeTokenPaymasterAndDataV07(encoded), {
    ...data,
    paymaster: getAddress(data.paymaster),
    feeToken: getAddress(data.feeToken),
  });
});

test("the hash is keccak256 of the eighteen values of docs/contracts.md, written out here one by one", () => {
  const expected = keccak256(
    encodeAbiParameters(
      [
        "address",
        "uint256",
        "bytes32",
        "bytes32",
        "bytes32",
        "uint256",
        "bytes32",
        "uint128",
        "uint128",
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
        op.sender,
        op.nonce,
        keccak256(op.initCode),
        keccak256(op.callData),
        op.accountGasLimits,
        op.preVerificationGas,
        op.gasFees,
        50_000n,
        50_000n,
        4337n,
        data.paymaster,
        0,
        1_700_000_300,
        1_700_000_000,
        data.feeToken,
        data.oracleAggregator,
        3_000_000_000n,
        1_100_000,
      ],
    ),
  );
  assert.equal(getTokenPaymasterHashV07(op, context), expected);
});

test("every signed field, both paymaster gas limits and every term change the hash", () => {
  const base = getTokenPaymasterHashV07(op, context);
  const hashes = new Set([base]);
  const changedOps: Record<string, PackedUserOperationSignedFields> = {
    sender: { ...op, sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a5" },
    nonce: { ...op, nonce: 8n },
    initCode: { ...op, initCode: "0x" },
    callData: { ...op, callData: "0xb61d27f600" },
    accountGasLimits: { ...op, accountGasLimits: packAccountGasLimits({ verificationGasLimit: 1n, callGasLimit: 2n }) },
    preVerificationGas: { ...op, preVerificationGas: 50_001n },
    gasFees: { ...op, gasFees: packGasFees({ maxPriorityFeePerGas: 1n, maxFeePerGas: 2n }) },
  };
  const changedContexts: Record<string, TokenHashContextV07> = {
    paymasterVerificationGasLimit: { ...context, paymasterVerificationGasLimit: 50_001n },
    paymasterPostOpGasLimit: { ...context, paymasterPostOpGasLimit: 50_001n },
    chainId: { ...context, chainId: 4338 },
    paymaster: { ...context, paymaster: "0x00000f7365ca6c59a2c93719ad53d567ed49c14d" },
    priceSource: { ...context, priceSource: PRICE_SOURCE.oracle },
    validUntil: { ...context, validUntil: context.validUntil + 1 },
    validAfter: { ...context, validAfter: context.validAfter + 1 },
    feeToken: { ...context, feeToken: "0xda5289fcaaf71d52a80a254da614a192b693e978" },
    oracleAggregator: { ...context, oracleAggregator: "0x0000000000000000000000000000000000000001" },
    exchangeRate: { ...context, exchangeRate: context.exchangeRate + 1n },
    priceMarkup: { ...context, priceMarkup: context.priceMarkup + 1 },
  };
  for (const [field, changed] of Object.entries(changedOps)) {
    const hash = getTokenPaymasterHashV07(changed, context);
    assert.ok(!hashes.has(hash), field);
    hashes.add(hash);
  }
  for (const [field, changed] of Object.entries(changedContexts)) {
    const hash = getTokenPaymasterHashV07(op, changed);
    assert.ok(!hashes.has(hash), field);
    hashes.add(hash);
  }
});

test("encode refuses what the contract would refuse; decode refuses another length or price source", () => {
  assert.throws(() => encodeTokenPaymasterAndDataV07({ ...data, signature: slice(signature, 0, 64) }), /65 bytes/);
  assert.throws(() => encodeTokenPaymasterAndDataV07({ ...data, priceMarkup: 999_999 }), /priceMarkup/);
  assert.throws(() => encodeTokenPaymasterAndDataV07({ ...data, exchangeRate: 0n }), /exchangeRate must not be zero/);
  assert.throws(() => encodeTokenPaymasterAndDataV07({ ...data, validUntil: 2 ** 48 }), /validUntil/);
  assert.throws(() => encodeTokenPaymasterAndDataV07({ ...data, paymaster: "0x1234" }), /paymaster is not an address/);
  assert.throws(
    () => encodeTokenPaymasterAndDataV07({ ...data, paymasterPostOpGasLimit: 2n ** 128n }),
    /paymasterPostOpGasLimit must fit in uint128/,
  );
  assert.throws(
    () => getTokenPaymasterHashV07(op, { ...context, paymasterVerificationGasLimit: -1n }),
    /paymasterVerificationGasLimit must fit in uint128/,
  );
  assert.throws(() => getTokenPaymasterHashV07(op, { ...context, priceSource: 2 as 0 }), /priceSource/);

  const encoded = encodeTokenPaymasterAndDataV07(data);
  assert.throws(() => decodeTokenPaymasterAndDataV07(slice(encoded, 0, 309)), /310 bytes, got 309/);
  assert.throws(() => decodeTokenPaymasterAndDataV07(concat([encoded, "0x00"])), /310 bytes, got 311/);
  const otherSource = concat([slice(encoded, 0, 52), "0x02", slice(encoded, 53)]);
  assert.throws(() => decodeTokenPaymasterAndDataV07(otherSource), /priceSource/);
});

test("the maximum charge is the EntryPoint's prefund in tokens; the charge adds the overhead and stops there", () => {
  const limits = {
    verificationGasLimit: 100_000n,
    callGasLimit: 200_000n,
    preVerificationGas: 50_000n,
    paymasterVerificationGasLimit: 50_000n,
    paymasterPostOpGasLimit: 50_000n,
    maxFeePerGas: 10n ** 9n,
  };
  assert.equal(maxGasCostV07(limits), 450_000n * 10n ** 9n);
  // 4.5e14 wei at 3,000 tokens (6 decimals) per ether with a 10% markup: 1,485,000 base units.
  assert.equal(maxTokenCostV07(limits, 3_000_000_000n, 1_100_000), 1_485_000n);

  const rate = { exchangeRate: 3_000_000_000n, priceMarkup: 1_000_000, maxTokenCost: 10n ** 12n };
  // 100,000 gas at 1 gwei plus the overhead at the same fee, no markup: (1e14 + 3e13) wei * 3e9 / 1e18.
  assert.equal(TOKEN_PAYMASTER_V07_POST_OP_OVERHEAD_GAS, 30_000n);
  assert.equal(tokenChargeV07(100_000n * 10n ** 9n, 10n ** 9n, rate), 390_000n);
  // Rounded up: one wei of cost is one base unit, never zero.
  assert.equal(tokenChargeV07(1n, 0n, rate), 1n);
  // Never above the maximum validation checked.
  assert.equal(tokenChargeV07(100_000n * 10n ** 9n, 10n ** 9n, { ...rate, maxTokenCost: 389_999n }), 389_999n);
});
