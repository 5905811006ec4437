import assert from "node:assert/strict";
import { test } from "node:test";
import { concat, encodeAbiParameters, getAddress, type Hex, size, slice, toFunctionSelector } from "viem";
import {
  decodeVerifyingPaymasterAndData,
  encodeVerifyingPaymasterAndData,
  getVerifyingPaymasterHash,
  VERIFYING_PAYMASTER_AND_DATA_LENGTH,
} from "../../src/bindings/paymasters/paymasterAndData";
import { vectorContext, vectorHash, vectorSignature, vectorUserOp } from "./vector";

test("the vector's callData uses the Biconomy v2 execute_ncC selector", () => {
  assert.equal(slice(vectorUserOp.callData, 0, 4), "0x0000189a");
  assert.equal(toFunctionSelector("execute_ncC(address,uint256,bytes)"), "0x0000189a");
});

test("the hash reproduces the test vector of docs/contracts.md", () => {
  assert.equal(getVerifyingPaymasterHash(vectorUserOp, vectorContext), vectorHash);
});

test("every signed field and every context value changes the hash", () => {
  const changedOps = {
    sender: { ...vectorUserOp, sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a5" },
    nonce: { ...vectorUserOp, nonce: 9n },
    initCode: { ...vectorUserOp, initCode: "0x00" },
    callData: { ...vectorUserOp, callData: `${vectorUserOp.callData}00` },
    callGasLimit: { ...vectorUserOp, callGasLimit: 108_849n },
    verificationGasLimit: { ...vectorUserOp, verificationGasLimit: 57_122n },
    preVerificationGas: { ...vectorUserOp, preVerificationGas: 75_389n },
    maxFeePerGas: { ...vectorUserOp, maxFeePerGas: 0xc02245n },
    maxPriorityFeePerGas: { ...vectorUserOp, maxPriorityFeePerGas: 0xf4241n },
  } as const;
  for (const [field, op] of Object.entries(changedOps)) {
    assert.notEqual(getVerifyingPaymasterHash(op, vectorContext), vectorHash, field);
  }
  const changedContexts = {
    chainId: { ...vectorContext, chainId: 80001 },
    paymaster: { ...vectorContext, paymaster: "0x00000f79b7faf42eebadba19acc07cd08af44788" },
    paymasterId: { ...vectorContext, paymasterId: "0x7306ac7a32eb690232de81a9ffb44bb346026fac" },
    validUntil: { ...vectorContext, validUntil: 1_700_000_301 },
    validAfter: { ...vectorContext, validAfter: 1_700_000_001 },
  } as const;
  for (const [field, context] of Object.entries(changedContexts)) {
    assert.notEqual(getVerifyingPaymasterHash(vectorUserOp, context), vectorHash, field);
  }
});

test("encode lays out the 276 bytes of docs/contracts.md and decode reverses it", () => {
  const { chainId: _, ...terms } = vectorContext;
  const data = { ...terms, signature: vectorSignature };
  const encoded = encodeVerifyingPaymasterAndData(data);
  assert.equal(size(encoded), VERIFYING_PAYMASTER_AND_DATA_LENGTH);
  assert.equal(encoded, encoded.toLowerCase());
  assert.equal(slice(encoded, 0, 20), vectorContext.paymaster.toLowerCase());
  // Word by word: paymasterId, validUntil, validAfter, offset of the bytes (0x80), its length (65), then r, s, v padded.
  const words = Array.from({ length: 8 }, (_, i) => slice(encoded, 20 + 32 * i, 52 + 32 * i));
  assert.equal(BigInt(words[0] ?? "0x"), BigInt(vectorContext.paymasterId));
  assert.equal(BigInt(words[1] ?? "0x"), 1_700_000_300n);
  assert.equal(BigInt(words[2] ?? "0x"), 1_700_000_000n);
  assert.equal(BigInt(words[3] ?? "0x"), 0x80n);
  assert.equal(BigInt(words[4] ?? "0x"), 65n);
  assert.equal(concat([words[5] ?? "0x", words[6] ?? "0x", slice(words[7] ?? "0x", 0, 1)]), vectorSignature);
  assert.equal(BigInt(slice(words[7] ?? "0x", 1)), 0n);

  assert.deepEqual(decodeVerifyingPaymasterAndData(encoded), {
    ...data,
    paymaster: getAddress(vectorContext.paymaster),
    paymasterId: getAddress(vectorContext.paymasterId),
  });
});

test("encode refuses a signature that is not 65 bytes and a window outside uint48", () => {
  const data = { ...vectorContext, signature: vectorSignature };
  assert.throws(
    () => encodeVerifyingPaymasterAndData({ ...data, signature: slice(vectorSignature, 0, 64) }),
    /65 bytes/,
  );
  assert.throws(() => encodeVerifyingPaymasterAndData({ ...data, signature: `${vectorSignature}00` }), /65 bytes/);
  assert.throws(() => encodeVerifyingPaymasterAndData({ ...data, validUntil: 2 ** 48 }), /validUntil/);
  assert.throws(() => encodeVerifyingPaymasterAndData({ ...data, validAfter: -1 }), /validAfter/);
  assert.throws(() => getVerifyingPaymasterHash(vectorUserOp, { ...vectorContext, validUntil: 1.5 }), /validUntil/);
});

test("decode refuses other lengths, including a 64-byte signature padded to the right total", () => {
  const valid = encodeVerifyingPaymasterAndData({ ...vectorContext, signature: vectorSignature });
  assert.throws(() => decodeVerifyingPaymasterAndData(slice(valid, 0, 275)), /276 bytes, got 275/);
  assert.throws(() => decodeVerifyingPaymasterAndData(`${valid}00`), /276 bytes, got 277/);
  const compact: Hex = concat([
    vectorContext.paymaster,
    encodeAbiParameters(
      [{ type: "address" }, { type: "uint48" }, { type: "uint48" }, { type: "bytes" }],
      [vectorContext.paymasterId, 1, 0, concat([slice(vectorSignature, 0, 64), "0x00"])],
    ),
  ]);
  // 65 bytes of signature: decodes. Now forge its length word to 64 while keeping 276 bytes.
  const forged = concat([
    slice(compact, 0, 20 + 4 * 32),
    encodeAbiParameters([{ type: "uint256" }], [64n]),
    slice(compact, 20 + 5 * 32),
  ]);
  assert.equal(size(forged), 276);
  assert.throws(() => decodeVerifyingPaymasterAndData(forged), /65 bytes, got 64/);
});
