// The hot path writes the v0.6 paymaster hash, the user operation hash and paymasterAndData word by word instead of
// through viem's general ABI encoder. This pins them, byte for byte, to viem on a table of random operations: every
// field at random widths (zero and the type's maximum included), random byte lengths, checksummed and lowercase
// addresses.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { bytesToHex, concat, encodeAbiParameters, getAddress, type Hex, keccak256 } from "viem";
import { getUserOperationHash } from "viem/account-abstraction";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import {
  decodeVerifyingPaymasterAndData,
  encodeVerifyingPaymasterAndData,
  getVerifyingPaymasterHash,
} from "../../src/bindings/paymasters/paymasterAndData";
import { randomAddress, randomHexBytes, randomUint } from "../helpers/randomAbiValues";

function randomOperation(): UserOperation {
  return {
    sender: randomAddress(),
    nonce: randomUint(256),
    initCode: randomHexBytes(),
    callData: randomHexBytes(),
    callGasLimit: randomUint(256),
    verificationGasLimit: randomUint(256),
    preVerificationGas: randomUint(256),
    maxFeePerGas: randomUint(256),
    maxPriorityFeePerGas: randomUint(256),
    paymasterAndData: randomHexBytes(),
    signature: "0x",
  };
}

/** The paymaster hash as viem's general encoder computes it (what the hot path replaced). */
function viemPaymasterHash(op: UserOperation, context: Parameters<typeof getVerifyingPaymasterHash>[1]): Hex {
  return keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "bytes32" },
        { type: "bytes32" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "address" },
        { type: "address" },
        { type: "uint48" },
        { type: "uint48" },
      ],
      [
        op.sender,
        op.nonce,
        keccak256(op.initCode),
        keccak256(op.callData),
        op.callGasLimit,
        op.verificationGasLimit,
        op.preVerificationGas,
        op.maxFeePerGas,
        op.maxPriorityFeePerGas,
        BigInt(context.chainId),
        context.paymaster,
        context.paymasterId,
        context.validUntil,
        context.validAfter,
      ],
    ),
  );
}

const randomContext = () => ({
  chainId: Number(randomUint(40)),
  paymaster: randomAddress(),
  paymasterId: randomAddress(),
  validUntil: Number(randomUint(48)),
  validAfter: Number(randomUint(48)),
});

test("the paymaster hash equals viem's encodeAbiParameters + keccak256 on 500 random operations", () => {
  for (let i = 0; i < 500; i++) {
    const op = randomOperation();
    const context = randomContext();
    assert.equal(getVerifyingPaymasterHash(op, context), viemPaymasterHash(op, context), JSON.stringify({ i }));
  }
});

test("the user operation hash equals viem's getUserOperationHash (v0.6) on 500 random operations", () => {
  for (let i = 0; i < 500; i++) {
    const op = randomOperation();
    const entryPoint = randomAddress();
    const chainId = Number(randomUint(40)) || 1;
    const expected = getUserOperationHash({
      chainId,
      entryPointAddress: entryPoint,
      entryPointVersion: "0.6",
      userOperation: op,
    });
    assert.equal(getUserOpHash(op, entryPoint, chainId), expected, `operation ${i}`);
  }
});

test("the two hashes of one operation, computed one after the other as a sponsorship does, stay those of viem", () => {
  // The byte-field hash is kept for the next call: alternating operations must never reuse another's.
  const ops = [randomOperation(), randomOperation()];
  for (let i = 0; i < 20; i++) {
    const op = ops[i % 2] as UserOperation;
    const context = randomContext();
    assert.equal(getVerifyingPaymasterHash(op, context), viemPaymasterHash(op, context));
    assert.equal(
      getUserOpHash(op, context.paymaster, 10),
      getUserOperationHash({
        chainId: 10,
        entryPointAddress: context.paymaster,
        entryPointVersion: "0.6",
        userOperation: op,
      }),
    );
  }
});

test("paymasterAndData equals viem's encodeAbiParameters layout on 200 random terms, and decodes back", () => {
  for (let i = 0; i < 200; i++) {
    const data = { ...randomContext(), signature: bytesToHex(randomBytes(65)) };
    const expected = concat([
      data.paymaster.toLowerCase() as Hex,
      encodeAbiParameters(
        [{ type: "address" }, { type: "uint48" }, { type: "uint48" }, { type: "bytes" }],
        [data.paymasterId, data.validUntil, data.validAfter, data.signature],
      ),
    ]).toLowerCase();
    const encoded = encodeVerifyingPaymasterAndData(data);
    assert.equal(encoded, expected);
    const decoded = decodeVerifyingPaymasterAndData(encoded);
    assert.equal(decoded.paymaster, getAddress(data.paymaster));
    assert.equal(decoded.paymasterId.toLowerCase(), data.paymasterId.toLowerCase());
    assert.deepEqual(
      [decoded.validUntil, decoded.validAfter, decoded.signature],
      [data.validUntil, data.validAfter, data.signature],
    );
  }
});

test("bad input is refused by name, never encoded", () => {
  const op = randomOperation();
  const context = randomContext();
  assert.throws(() => getVerifyingPaymasterHash({ ...op, sender: "0x1234" }, context), /sender is not an address/);
  assert.throws(() => getVerifyingPaymasterHash({ ...op, nonce: -1n }, context), /nonce must be a uint256/);
  assert.throws(() => getVerifyingPaymasterHash({ ...op, maxFeePerGas: 2n ** 256n }, context), /maxFeePerGas/);
  assert.throws(() => getVerifyingPaymasterHash({ ...op, callData: "0xabc" }, context), /callData is not hex bytes/);
  assert.throws(() => getVerifyingPaymasterHash({ ...op, initCode: "0xzz" }, context), /initCode is not hex bytes/);
  assert.throws(
    () => getVerifyingPaymasterHash(op, { ...context, paymasterId: "0x" }),
    /paymasterId is not an address/,
  );
  assert.throws(() => getUserOpHash(op, "0x12", 1), /entryPoint is not an address/);
  assert.throws(() => getUserOpHash({ ...op, paymasterAndData: "0x0" }, randomAddress(), 1), /paymasterAndData/);
  const signature = bytesToHex(randomBytes(65));
  assert.throws(
    () => encodeVerifyingPaymasterAndData({ ...context, signature: `0x${"z".repeat(130)}` }),
    /signature is not hex/,
  );
  assert.throws(() => encodeVerifyingPaymasterAndData({ ...context, paymaster: "0x1", signature }), /paymaster/);
});
