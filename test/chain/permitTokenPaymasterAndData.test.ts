// The up-front token paymaster's layout, hash inputs and settlement in isolation; test/contracts/v07/
// permitTokenPaymaster.test.ts pins the hash and the parse to the contract itself on the real EntryPoints.
import assert from "node:assert/strict";
import { test } from "node:test";
import { concat, getAddress, type Hex, hexToBigInt, keccak256, maxUint256, numberToHex, size, slice } from "viem";
import { keccakOfWords } from "../../src/abi/abiWords";
import { PAYMASTER_SIGNATURE_MAGIC } from "../../src/bindings/entryPoints/entryPointV09";
import {
  type PackedUserOperationSignedFields,
  packAccountGasLimits,
  packGasFees,
  paymasterHashPrefixWords,
} from "../../src/bindings/entryPoints/packedUserOperation";
import { permitTokenHashedTerms, permitTokenPaymaster } from "../../src/bindings/paymasters/permitToken";
import {
  decodePermitTokenPaymasterAndData,
  encodeCarriedPermit,
  encodePermitTokenPaymasterAndData,
  encodePermitTokenPaymasterData,
  getPermitTokenPaymasterHash,
  PERMIT_DEADLINE,
  PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS,
  type PermitTokenPaymasterData,
  permitTokenSettlement,
} from "../../src/bindings/paymasters/permitTokenPaymasterAndData";
import { permitTypedData } from "../../src/bindings/paymasters/permitTypedData";
import {
  encodeTokenPaymasterData,
  PRICE_SOURCE,
  tokenHashedTerms,
} from "../../src/bindings/paymasters/tokenPaymasterAndData";

const signature: Hex = `0x${"ab".repeat(64)}1b`;
/** An ERC-1271 signature may be any length. */
const permit = { value: 5_000_000n, signature: `0x${"cd".repeat(100)}` as Hex };
const data: PermitTokenPaymasterData = {
  paymaster: "0x88d9885a5a6BA658B232B472f971F6CB8dd0abFb",
  paymasterVerificationGasLimit: 165_000n,
  paymasterPostOpGasLimit: 30_000n,
  priceSource: PRICE_SOURCE.exchangeRate,
  validUntil: 1_700_000_300,
  validAfter: 1_700_000_000,
  feeToken: "0x28a0D5E9FCc2A2fA78155B1baE4CB53a4d727ff9",
  oracleAggregator: "0x0000000000000000000000000000000000000000",
  exchangeRate: 3_000_000_000n,
  priceMarkup: 1_100_000,
  permit,
  signature,
};
const op: PackedUserOperationSignedFields = {
  sender: "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4",
  nonce: 7n,
  initCode: "0x",
  callData: "0xb61d27f6",
  accountGasLimits: packAccountGasLimits({ verificationGasLimit: 500_000n, callGasLimit: 100_000n }),
  preVerificationGas: 50_000n,
  gasFees: packGasFees({ maxPriorityFeePerGas: 1_000_000_000n, maxFeePerGas: 3_000_000_000n }),
};

test("paymasterAndData: the 52 bytes, TokenPaymasterV07's price source and terms, the permit's length, the permit, the signature", () => {
  const encoded = encodePermitTokenPaymasterAndData(data);
  assert.equal(encoded, encoded.toLowerCase());
  // The terms are TokenPaymasterV07's bytes, up to where its signature would start.
  assert.equal(slice(encoded, 52, 245), slice(encodeTokenPaymasterData(data), 0, 193));
  assert.equal(hexToBigInt(slice(encoded, 245, 247)), 32n + 100n);
  assert.equal(hexToBigInt(slice(encoded, 247, 279)), permit.value);
  assert.equal(slice(encoded, 279, 379), permit.signature);
  assert.equal(slice(encoded, 379), signature);
  assert.equal(slice(encoded, 52), encodePermitTokenPaymasterData(data));
  assert.deepEqual(decodePermitTokenPaymasterAndData(encoded), {
    ...data,
    paymaster: getAddress(data.paymaster),
    oracleAggregator: getAddress(data.oracleAggregator),
  });

  // Without a permit its length is zero and nothing else moves.
  const { permit: _permit, ...withoutPermit } = data;
  const plain = encodePermitTokenPaymasterAndData(withoutPermit);
  assert.equal(size(plain), 247 + 65);
  assert.equal(slice(plain, 245, 247), "0x0000");
  assert.equal(decodePermitTokenPaymasterAndData(plain).permit, undefined);
});

test("v0.9's parallel signing: no signature in paymasterData, the suffix after it, and both places at once refused", () => {
  const apart = encodePermitTokenPaymasterAndData({ ...data, signature: "0x", paymasterSignature: signature });
  assert.equal(slice(apart, size(apart) - 8), PAYMASTER_SIGNATURE_MAGIC);
  assert.equal(hexToBigInt(slice(apart, size(apart) - 10, size(apart) - 8)), 65n);
  const decoded = decodePermitTokenPaymasterAndData(apart);
  assert.equal(decoded.signature, "0x");
  assert.equal(decoded.paymasterSignature, signature);
  assert.deepEqual(decoded.permit, permit);
  assert.throws(() => encodePermitTokenPaymasterAndData({ ...data, paymasterSignature: signature }), /not both/);
});

test("what the contract would refuse is refused before anything is signed or sent", () => {
  assert.throws(() => encodePermitTokenPaymasterData({ ...data, signature: "0x1234" }), /65 bytes \(or none/);
  assert.throws(() => encodeCarriedPermit({ value: 1n, signature: "0x" }), /permit signature is empty/);
  assert.throws(
    () => encodeCarriedPermit({ value: 1n, signature: `0x${"00".repeat(0xffff)}` }),
    /more than a uint16 length allows/,
  );
  assert.throws(() => encodeCarriedPermit({ value: maxUint256 + 1n, signature }), /uint256/);
  const encoded = encodePermitTokenPaymasterAndData(data);
  // A permit length that runs past the data, or one too short to hold a value and a signature.
  assert.throws(() => decodePermitTokenPaymasterAndData(concat([slice(encoded, 0, 245), "0xffff"])), /does not fit/);
  assert.throws(() => decodePermitTokenPaymasterAndData(concat([slice(encoded, 0, 245), "0x0020"])), /does not fit/);
  assert.throws(() => decodePermitTokenPaymasterAndData(slice(encoded, 0, 200)), /at least 247 bytes/);
});

test("the hash is TokenPaymasterV07's words, then keccak256 of the permit's bytes as one more word", () => {
  const context = { ...data, chainId: 4337 };
  // TokenPaymasterV07's words (pinned to viem's encoder and to its contract by their own tests), and the permit's hash.
  const hashOf = (carried: typeof permit | undefined) =>
    keccakOfWords(
      paymasterHashPrefixWords(op, context) +
        tokenHashedTerms(context) +
        keccak256(carried ? concat([numberToHex(carried.value, { size: 32 }), carried.signature]) : "0x").slice(2),
    );
  assert.equal(getPermitTokenPaymasterHash(op, context), hashOf(permit));
  assert.equal(getPermitTokenPaymasterHash(op, { ...context, permit: undefined }), hashOf(undefined));
  const other = { ...permit, value: permit.value + 1n };
  assert.equal(getPermitTokenPaymasterHash(op, { ...context, permit: other }), hashOf(other));
  assert.notEqual(hashOf(other), hashOf(permit));
});

test("the engine's kind signs what the contract hashes and encodes what it parses, in sequence and in parallel", () => {
  const context = { ...data, chainId: 4337 };
  const { paymaster, paymasterVerificationGasLimit, paymasterPostOpGasLimit, signature: _, ...terms } = data;
  const kind = permitTokenPaymaster({
    paymaster,
    terms,
    balanceRule: () => ({ name: "balance", evaluate: () => ({ rule: "balance", passed: true }) }),
    grantRule: () => ({ name: "grant", evaluate: () => ({ rule: "grant", passed: true }) }),
  });
  for (const carried of [permit, undefined]) {
    const withPermit = { ...terms, permit: carried };
    // The engine hashes the version's prefix, then the kind's terms (src/sponsorship/engine.ts).
    assert.equal(
      keccakOfWords(paymasterHashPrefixWords(op, context) + permitTokenHashedTerms(withPermit)),
      getPermitTokenPaymasterHash(op, { ...context, permit: carried }),
    );
    assert.equal(kind.encodeData(withPermit, signature), encodePermitTokenPaymasterData({ ...withPermit, signature }));
    assert.equal(
      kind.encodeTermsAlone?.(withPermit),
      encodePermitTokenPaymasterData({ ...withPermit, signature: "0x" }),
    );
  }
  assert.equal(kind.paymaster, paymaster, "the up-front paymaster, not the EntryPoint's approve-in-batch one");
  // Validation at least ours (more when asked: an account's ERC-1271 check may cost more), postOp always ours.
  assert.deepEqual(kind.gasLimits({}), { paymasterVerificationGasLimit: 165_000n, paymasterPostOpGasLimit: 30_000n });
  assert.deepEqual(kind.gasLimits({ paymasterVerificationGasLimit: 300_000n }), {
    paymasterVerificationGasLimit: 300_000n,
    paymasterPostOpGasLimit: 30_000n,
  });
});

test("postOp keeps the cost with its overhead, converted and never above the prefund, and refunds the rest", () => {
  const terms = { exchangeRate: 3_000_000_000n, priceMarkup: 1_000_000, prefund: 1_000_000n };
  const feePerGas = 1_000_000_000n;
  // 100,000 gas + the 30,000 overhead at 1 gwei = 1.3e14 wei = 390,000 base units at 3,000 tokens per ether.
  assert.equal(PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS, 30_000n);
  assert.deepEqual(permitTokenSettlement(100_000n * feePerGas, feePerGas, terms), {
    charge: 390_000n,
    refund: 610_000n,
  });
  assert.deepEqual(permitTokenSettlement(10n ** 18n, feePerGas, terms), { charge: 1_000_000n, refund: 0n });
});

test("the Permit typed data: owner, spender, value, nonce and the maximum deadline, in the token's domain", () => {
  const domain = { name: "USD Coin", version: "2", chainId: 8453, verifyingContract: data.feeToken };
  const typed = permitTypedData(domain, { owner: op.sender, spender: data.paymaster, value: 5n, nonce: 3n });
  assert.equal(typed.primaryType, "Permit");
  assert.deepEqual(typed.domain, domain);
  assert.deepEqual(typed.message, {
    owner: op.sender,
    spender: data.paymaster,
    value: 5n,
    nonce: 3n,
    deadline: PERMIT_DEADLINE,
  });
  assert.deepEqual(
    typed.types.Permit.map(({ name }) => name),
    ["owner", "spender", "value", "nonce", "deadline"],
  );
});
