// What an operation carries while its gas is estimated: the final paymasterAndData is signed over the gas values, and
// the account signs over paymasterAndData, so neither can exist yet. Stand-ins of the final length and shape take their
// place, so that the simulation pays for the same bytes and runs the same code paths as the real operation.
import { type Address, concat, type Hex, size } from "viem";
import type { UserOperation } from "../bindings/entryPoints/userOperation";
import { encodeVerifyingPaymasterAndData, type SponsorshipTerms } from "../bindings/paymasters/paymasterAndData";
import {
  encodeTokenPaymasterAndData,
  TOKEN_PAYMASTER_AND_DATA_LENGTH,
  type TokenFeeTerms,
} from "../bindings/paymasters/tokenPaymasterAndData";

/**
 * 65 bytes r,s,v that pass every shape check (r below the curve order, s in the lower half, v = 28) and recover to an
 * address, not to zero: OpenZeppelin's ECDSA.recover (SimpleAccount) does not revert on it, and our paymaster's
 * tryRecover takes the same path, ecrecover included, as with a real signature. It is nobody's signature, so the
 * account and the paymaster report a signature failure, which simulateHandleOp and bundlers' estimation ignore.
 */
export const DUMMY_SIGNATURE: Hex = `0x${"ff".repeat(15)}f0${"00".repeat(16)}7a${"aa".repeat(31)}1c`;

export interface StubTerms extends SponsorshipTerms {
  paymaster: Address;
}

/**
 * Our 276-byte paymasterAndData with the dummy signature: the layout of docs/contracts.md, 'Verifying
 * paymasterAndData layout (276 bytes)', byte for byte.
 */
export function stubPaymasterAndData(terms: StubTerms): Hex {
  return encodeVerifyingPaymasterAndData({ ...terms, signature: DUMMY_SIGNATURE });
}

/**
 * ERC20 mode: the token paymaster's 278-byte paymasterAndData with the dummy signature (docs/contracts.md, 'Token
 * paymasterAndData layout (278 bytes)').
 */
export function stubTokenPaymasterAndData(terms: TokenFeeTerms & { paymaster: Address }): Hex {
  return encodeTokenPaymasterAndData({ ...terms, signature: DUMMY_SIGNATURE });
}

/** The client's account signature, or the dummy one when it sent none. */
export function stubAccountSignature(signature: Hex): Hex {
  return size(signature) === 0 ? DUMMY_SIGNATURE : signature;
}

/**
 * The operation as the preVerificationGas formula must price it: both signatures are unknown, so every byte of them
 * counts as non-zero, the costlier case; the rest of paymasterAndData (address, paymasterId, window) is as final.
 */
export function withWorstCaseSignatures(op: UserOperation): UserOperation {
  // The verifying layout ABI-encodes the 65 bytes, padded to three words; the token layout ends with them raw.
  const signatureTail =
    size(op.paymasterAndData) === TOKEN_PAYMASTER_AND_DATA_LENGTH
      ? "ff".repeat(65)
      : `${"ff".repeat(65)}${"00".repeat(31)}`;
  const paymasterSignatureStart = size(op.paymasterAndData) - signatureTail.length / 2;
  const paymasterAndData =
    size(op.paymasterAndData) >= 96
      ? concat([`0x${op.paymasterAndData.slice(2, 2 + 2 * paymasterSignatureStart)}`, `0x${signatureTail}`])
      : op.paymasterAndData;
  return {
    ...op,
    paymasterAndData,
    signature: `0x${"ff".repeat(Math.max(size(op.signature), 65))}`,
  };
}
