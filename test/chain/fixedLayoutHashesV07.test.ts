// The v0.7/v0.8 hot path writes both paymasters' hashes, the verifying paymaster's data and the EntryPoint's user
// operation hash word by word instead of through viem's general ABI encoder. This pins them, byte for byte, to viem on
// random operations: every field at random widths (zero and the type's maximum included), random byte lengths,
// checksummed and lowercase addresses, upper-case hex in the packed words.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { type Address, bytesToHex, encodeAbiParameters, type Hex, keccak256 } from "viem";
import { getUserOperationHash, type UserOperation } from "viem/account-abstraction";
import {
  type PackedUserOperationSignedFields,
  packAccountGasLimits,
  packGasFees,
} from "../../src/bindings/entryPoints/packedUserOperation";
import {
  type EntryPointVersionV07,
  getUserOpHashV07,
  type UserOperationV07,
} from "../../src/bindings/entryPoints/userOperationV07";
import {
  encodeVerifyingPaymasterDataV07,
  getVerifyingPaymasterHashV07,
} from "../../src/bindings/paymasters/paymasterAndDataV07";
import { MAX_PRICE_MARKUP, MIN_PRICE_MARKUP, PRICE_SOURCE } from "../../src/bindings/paymasters/tokenPaymasterAndData";
import { getTokenPaymasterHashV07 } from "../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import { randomAddress, randomHexBytes, randomInt, randomUint } from "../helpers/randomAbiValues";

/** 32 random bytes as hex, in upper case one time in three (a client's packed word may come either way). */
const randomWord = (): Hex => {
  const digits = bytesToHex(randomBytes(32)).slice(2);
  return `0x${randomInt(3) === 0 ? digits.toUpperCase() : digits}`;
};

function randomPackedOperation(): PackedUserOperationSignedFields {
  return {
    sender: randomAddress(),
    nonce: randomUint(256),
    initCode: randomHexBytes(),
    callData: randomHexBytes(),
    accountGasLimits: randomWord(),
    preVerificationGas: randomUint(256),
    gasFees: randomWord(),
  };
}

const randomPrefixContext = () => ({
  paymasterVerificationGasLimit: randomUint(128),
  paymasterPostOpGasLimit: randomUint(128),
  chainId: Number(randomUint(40)),
  paymaster: randomAddress(),
});

const PREFIX_TYPES = [
  { type: "address" },
  { type: "uint256" },
  { type: "bytes32" },
  { type: "bytes32" },
  { type: "bytes32" },
  { type: "uint256" },
  { type: "bytes32" },
  { type: "uint128" },
  { type: "uint128" },
  { type: "uint256" },
  { type: "address" },
] as const;

/** The prefix both paymasters hash, as viem's encoder takes it (what the hot path replaced). */
function prefixValues(op: PackedUserOperationSignedFields, context: ReturnType<typeof randomPrefixContext>) {
  return [
    op.sender,
    op.nonce,
    keccak256(op.initCode),
    keccak256(op.callData),
    op.accountGasLimits,
    op.preVerificationGas,
    op.gasFees,
    context.paymasterVerificationGasLimit,
    context.paymasterPostOpGasLimit,
    BigInt(context.chainId),
    context.paymaster,
  ] as const;
}

test("the v0.7 verifying paymaster hash equals viem's encodeAbiParameters + keccak256 on 500 random operations", () => {
  for (let i = 0; i < 500; i++) {
    const op = randomPackedOperation();
    const context = {
      ...randomPrefixContext(),
      paymasterId: randomAddress(),
      validUntil: Number(randomUint(48)),
      validAfter: Number(randomUint(48)),
    };
    const expected = keccak256(
      encodeAbiParameters(
        [...PREFIX_TYPES, { type: "address" }, { type: "uint48" }, { type: "uint48" }],
        [...prefixValues(op, context), context.paymasterId, context.validUntil, context.validAfter],
      ),
    );
    assert.equal(getVerifyingPaymasterHashV07(op, context), expected, `operation ${i}`);
  }
});

test("the v0.7 token paymaster hash equals viem's encodeAbiParameters + keccak256 on 500 random operations", () => {
  for (let i = 0; i < 500; i++) {
    const op = randomPackedOperation();
    const priceSource = randomInt(2) === 0 ? PRICE_SOURCE.exchangeRate : PRICE_SOURCE.oracle;
    const context = {
      ...randomPrefixContext(),
      priceSource,
      validUntil: Number(randomUint(48)),
      validAfter: Number(randomUint(48)),
      feeToken: randomAddress(),
      oracleAggregator: randomAddress(),
      exchangeRate: (randomUint(256) || 1n) as bigint,
      priceMarkup: MIN_PRICE_MARKUP + randomInt(MAX_PRICE_MARKUP - MIN_PRICE_MARKUP + 1),
    };
    const expected = keccak256(
      encodeAbiParameters(
        [
          ...PREFIX_TYPES,
          { type: "uint8" },
          { type: "uint48" },
          { type: "uint48" },
          { type: "address" },
          { type: "address" },
          { type: "uint256" },
          { type: "uint32" },
        ],
        [
          ...prefixValues(op, context),
          context.priceSource,
          context.validUntil,
          context.validAfter,
          context.feeToken,
          context.oracleAggregator,
          context.exchangeRate,
          context.priceMarkup,
        ],
      ),
    );
    assert.equal(getTokenPaymasterHashV07(op, context), expected, `operation ${i}`);
  }
});

test("the v0.7 verifying paymasterData equals viem's encodeAbiParameters on 200 random terms", () => {
  for (let i = 0; i < 200; i++) {
    const data = {
      paymasterId: randomAddress(),
      validUntil: Number(randomUint(48)),
      validAfter: Number(randomUint(48)),
      signature: bytesToHex(randomBytes(65)),
    };
    const expected = encodeAbiParameters(
      [{ type: "address" }, { type: "uint48" }, { type: "uint48" }, { type: "bytes" }],
      [data.paymasterId, data.validUntil, data.validAfter, data.signature],
    );
    assert.equal(encodeVerifyingPaymasterDataV07(data), expected.toLowerCase(), `terms ${i}`);
  }
});

/** A random unpacked operation: with or without a factory and a paymaster, every gas field within its uint128. */
function randomOperationV07(): UserOperationV07 {
  const withFactory = randomInt(2) === 0;
  const withPaymaster = randomInt(2) === 0;
  return {
    sender: randomAddress(),
    nonce: randomUint(256),
    ...(withFactory ? { factory: randomAddress(), factoryData: randomHexBytes() } : {}),
    callData: randomHexBytes(),
    callGasLimit: randomUint(128),
    verificationGasLimit: randomUint(128),
    preVerificationGas: randomUint(256),
    maxFeePerGas: randomUint(128),
    maxPriorityFeePerGas: randomUint(128),
    ...(withPaymaster
      ? {
          paymaster: randomAddress(),
          paymasterVerificationGasLimit: randomUint(128),
          paymasterPostOpGasLimit: randomUint(128),
          paymasterData: randomHexBytes(),
        }
      : {}),
    signature: randomHexBytes(),
  };
}

function viemUserOpHash(op: UserOperationV07, version: EntryPointVersionV07, entryPoint: Address, chainId: number) {
  return getUserOperationHash({
    userOperation: op as unknown as UserOperation<"0.7">,
    entryPointAddress: entryPoint,
    entryPointVersion: version,
    chainId,
  });
}

for (const version of ["0.7", "0.8"] as const) {
  test(`the v${version} user operation hash equals viem's getUserOperationHash on 300 random operations`, () => {
    for (let i = 0; i < 300; i++) {
      const op = randomOperationV07();
      const entryPoint = randomAddress();
      const chainId = Number(randomUint(40)) || 1;
      assert.equal(
        getUserOpHashV07(op, entryPoint, chainId, version),
        viemUserOpHash(op, version, entryPoint, chainId),
        `operation ${i}`,
      );
    }
  });
}

test("a sponsorship's hashes of alternating operations, one after the other, stay those of viem", () => {
  // Each byte field's last hash is kept for the next call: alternating operations must never reuse another's.
  const ops = [randomOperationV07(), randomOperationV07()];
  for (let i = 0; i < 20; i++) {
    const op = ops[i % 2] as UserOperationV07;
    const context = {
      ...randomPrefixContext(),
      paymasterId: randomAddress(),
      validUntil: Number(randomUint(48)),
      validAfter: Number(randomUint(48)),
    };
    const packed = {
      sender: op.sender,
      nonce: op.nonce,
      initCode: op.factory === undefined ? "0x" : (`${op.factory}${(op.factoryData ?? "0x").slice(2)}` as Hex),
      callData: op.callData,
      accountGasLimits: packAccountGasLimits(op),
      preVerificationGas: op.preVerificationGas,
      gasFees: packGasFees(op),
    };
    const expected = keccak256(
      encodeAbiParameters(
        [...PREFIX_TYPES, { type: "address" }, { type: "uint48" }, { type: "uint48" }],
        [...prefixValues(packed, context), context.paymasterId, context.validUntil, context.validAfter],
      ),
    );
    assert.equal(getVerifyingPaymasterHashV07(packed, context), expected);
    assert.equal(getUserOpHashV07(op, context.paymaster, 10, "0.7"), viemUserOpHash(op, "0.7", context.paymaster, 10));
  }
});

test("bad packed words are refused by name, never hashed", () => {
  const op = randomPackedOperation();
  const context = { ...randomPrefixContext(), paymasterId: randomAddress(), validUntil: 1, validAfter: 0 };
  assert.throws(
    () => getVerifyingPaymasterHashV07({ ...op, accountGasLimits: "0x1234" }, context),
    /accountGasLimits is not 32 bytes of hex/,
  );
  assert.throws(
    () => getVerifyingPaymasterHashV07({ ...op, gasFees: `0x${"zz".repeat(32)}` }, context),
    /gasFees is not 32 bytes of hex/,
  );
  assert.throws(() => getVerifyingPaymasterHashV07({ ...op, sender: "0x12" }, context), /sender is not an address/);
  assert.throws(() => getVerifyingPaymasterHashV07({ ...op, callData: "0xabc" }, context), /callData is not hex bytes/);
  assert.throws(
    () => getVerifyingPaymasterHashV07(op, { ...context, paymasterPostOpGasLimit: 2n ** 128n }),
    /paymasterPostOpGasLimit must fit in uint128/,
  );
});
