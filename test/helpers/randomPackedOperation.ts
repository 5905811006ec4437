// Random v0.7 operations and values for the contract tests that compare our hashes and layouts with the contracts'
// own (getHash, parsePaymasterAndData): the verifying and the token paymaster test the same way, on the same kind of
// operation, so both draw them from here.
import { type Address, type Hex, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  type PackedUserOperation,
  packAccountGasLimits,
  packGasFees,
  packInitCode,
} from "../../src/bindings/entryPoints/packedUserOperation";

/** A random unsigned integer of `bytes` bytes. */
export function randomBigInt(bytes: number): bigint {
  return BigInt(toHex(crypto.getRandomValues(new Uint8Array(bytes))));
}

/** `bytes` random bytes. */
export function randomHex(bytes: number): Hex {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** The address of a new key: nobody's account, contract or deposit yet. */
export function freshAddress(): Address {
  return privateKeyToAccount(generatePrivateKey()).address;
}

/**
 * The `i`-th operation of a series: every field random, initCode absent on even `i` and of growing length otherwise,
 * callData growing with `i` (empty first), so the series crosses the ABI's word boundaries.
 */
export function randomPackedOperation(i: number): PackedUserOperation {
  return {
    sender: freshAddress(),
    nonce: randomBigInt(32),
    initCode: i % 2 === 0 ? "0x" : packInitCode(freshAddress(), randomHex(1 + i * 13)),
    callData: randomHex(i * 37),
    accountGasLimits: packAccountGasLimits({ verificationGasLimit: randomBigInt(16), callGasLimit: randomBigInt(16) }),
    preVerificationGas: randomBigInt(32),
    gasFees: packGasFees({ maxPriorityFeePerGas: randomBigInt(16), maxFeePerGas: randomBigInt(16) }),
    paymasterAndData: "0x",
    signature: randomHex(65),
  };
}
