// The v0.7/v0.8 layout and hash in isolation; test/contracts/v07 pins the hash to the contract's own getHash.
import assert from "node:assert/strict";
import { test } from "node:test";
import { concat, getAddress, type Hex, hexToBigInt, size, slice } from "viem";
import {
  PAYMASTER_DATA_OFFSET,
  type PackedUserOperationSignedFields,
  packAccountGasLimits,
  packGasFees,
  packInitCode,
} from "../../src/bindings/entryPoints/packedUserOperation";
import {
  decodeVerifyingPaymasterAndDataV07,
  encodeVerifyingPaymasterAndDataV07,
  encodeVerifyingPaymasterDataV07,
  getVerifyingPaymasterHashV07,
  VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH,
  type VerifyingPaymasterDataV07,
} from "../../src/bindings/paymasters/paymasterAndDataV07";

const signature: Hex = `0x${"ab".repeat(64)}1b`;
const data: VerifyingPaymasterDataV07 = {
  paymaster: "0x00000f79b7faf42eebadba19acc07cd08af44789",
  paymasterVerificationGasLimit: 60_000n,
  paymasterPostOpGasLimit: 40_000n,
  paymasterId: "0x7306ac7a32eb690232de81a9ffb44bb346026fab",
  validUntil: 1_700_000_300,
  validAfter: 1_699_999_700,
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
const context = { ...data, chainId: 4337 };

test("paymasterAndData lays out address, the two gas limits and paymasterData (308 bytes)", () => {
  const encoded = encodeVerifyingPaymasterAndDataV07(data);
  assert.equal(size(encoded), VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH);
  assert.equal(VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH, 308);
  assert.equal(slice(encoded, 0, 20), data.paymaster.toLowerCase());
  assert.equal(hexToBigInt(slice(encoded, 20, 36)), 60_000n);
  assert.equal(hexToBigInt(slice(encoded, 36, 52)), 40_000n);
  assert.equal(slice(encoded, PAYMASTER_DATA_OFFSET), encodeVerifyingPaymasterDataV07(data));
  // Decoding checksums the addresses.
  assert.deepEqual(decodeVerifyingPaymasterAndDataV07(encoded), {
    ...data,
    paymaster: getAddress(data.paymaster),
    paymasterId: getAddress(data.paymasterId),
  });
});

test("the packed words put the first-named value in the high 128 bits", () => {
  assert.equal(
    packAccountGasLimits({ verificationGasLimit: 1n, callGasLimit: 2n }),
    `0x${"0".repeat(31)}1${"0".repeat(31)}2`,
  );
  assert.equal(packGasFees({ maxPriorityFeePerGas: 3n, maxFeePerGas: 4n }), `0x${"0".repeat(31)}3${"0".repeat(31)}4`);
  assert.equal(packInitCode(undefined), "0x");
  assert.equal(
    packInitCode("0x91E60e0613810449d098b0b5Ec8b51A0FE8c8985", "0x01"),
    "0x91e60e0613810449d098b0b5ec8b51a0fe8c898501",
  );
  assert.throws(
    () => packGasFees({ maxPriorityFeePerGas: 2n ** 128n, maxFeePerGas: 1n }),
    /maxPriorityFeePerGas must fit in uint128/,
  );
  assert.throws(() => packInitCode("0x1234"), /factory is not an address/);
  // EIP-7702: the short marker stays two bytes, as viem and Alto pack it; the padded one is packed like an address.
  assert.equal(packInitCode("0x7702"), "0x7702");
  assert.equal(
    packInitCode("0x7702000000000000000000000000000000000000"),
    "0x7702000000000000000000000000000000000000",
  );
});

test("every field of the packed operation, both paymaster gas limits and the terms change the hash", () => {
  const base = getVerifyingPaymasterHashV07(op, context);
  const changedOps: Record<string, PackedUserOperationSignedFields> = {
    sender: { ...op, sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a5" },
    nonce: { ...op, nonce: 8n },
    initCode: { ...op, initCode: "0x" },
    callData: { ...op, callData: "0xb61d27f600" },
    accountGasLimits: {
      ...op,
      accountGasLimits: packAccountGasLimits({ verificationGasLimit: 500_000n, callGasLimit: 100_001n }),
    },
    preVerificationGas: { ...op, preVerificationGas: 50_001n },
    gasFees: { ...op, gasFees: packGasFees({ maxPriorityFeePerGas: 1_000_000_001n, maxFeePerGas: 3_000_000_000n }) },
  };
  for (const [field, changed] of Object.entries(changedOps)) {
    assert.notEqual(getVerifyingPaymasterHashV07(changed, context), base, field);
  }
  const changedContexts = {
    chainId: { ...context, chainId: 4338 },
    paymaster: { ...context, paymaster: "0x00000f79b7faf42eebadba19acc07cd08af44788" },
    paymasterId: { ...context, paymasterId: "0x7306ac7a32eb690232de81a9ffb44bb346026fac" },
    validUntil: { ...context, validUntil: 1_700_000_301 },
    validAfter: { ...context, validAfter: 1_699_999_701 },
    paymasterVerificationGasLimit: { ...context, paymasterVerificationGasLimit: 60_001n },
    paymasterPostOpGasLimit: { ...context, paymasterPostOpGasLimit: 40_001n },
  } as const;
  for (const [field, changed] of Object.entries(changedContexts)) {
    assert.notEqual(getVerifyingPaymasterHashV07(op, changed), base, field);
  }
});

test("bad input is refused with the field named", () => {
  assert.throws(
    () => encodeVerifyingPaymasterAndDataV07({ ...data, signature: slice(signature, 0, 64) }),
    /paymaster signature must be 65 bytes, got 64/,
  );
  assert.throws(
    () => encodeVerifyingPaymasterAndDataV07({ ...data, validUntil: 2 ** 48 }),
    /validUntil must be an integer/,
  );
  assert.throws(
    () => encodeVerifyingPaymasterAndDataV07({ ...data, validAfter: 1.5 }),
    /validAfter must be an integer/,
  );
  assert.throws(
    () => encodeVerifyingPaymasterAndDataV07({ ...data, paymasterPostOpGasLimit: 2n ** 128n }),
    /paymasterPostOpGasLimit must fit in uint128/,
  );
  assert.throws(
    () => getVerifyingPaymasterHashV07(op, { ...context, paymasterVerificationGasLimit: -1n }),
    /paymasterVerificationGasLimit must fit in uint128/,
  );
  assert.throws(
    () => encodeVerifyingPaymasterAndDataV07({ ...data, paymaster: "0x1234" }),
    /paymaster is not an address/,
  );
  const encoded = encodeVerifyingPaymasterAndDataV07(data);
  assert.throws(() => decodeVerifyingPaymasterAndDataV07(slice(encoded, 0, 307)), /must be 308 bytes, got 307/);
  // The right total length with a length word saying 64: another signature length hidden in a valid-looking size.
  const lengthWord = PAYMASTER_DATA_OFFSET + 128;
  const crafted = concat([slice(encoded, 0, lengthWord), `0x${"0".repeat(62)}40`, slice(encoded, lengthWord + 32)]);
  assert.equal(size(crafted), 308);
  assert.throws(() => decodeVerifyingPaymasterAndDataV07(crafted), /paymaster signature must be 65 bytes, got 64/);
});
