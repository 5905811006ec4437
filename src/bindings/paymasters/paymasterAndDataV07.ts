// The verifying paymaster's paymasterAndData for EntryPoint v0.7 and v0.8, byte for byte as
// contracts/v07/VerifyingPaymasterV07.sol parses it, and the hash its verifying signer signs (docs/contracts.md,
// 'VerifyingPaymasterV07 (EntryPoint v0.7 and v0.8)').
//
//   [0:20]    paymaster address                      \
//   [20:36]   paymasterVerificationGasLimit (uint128)  } read by the EntryPoint
//   [36:52]   paymasterPostOpGasLimit (uint128)       /
//   [52:308]  paymasterData = abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
import { type Address, decodeAbiParameters, type Hex, size, slice } from "viem";
import { keccakOfWords } from "../../abi/abiWords";
import type { PackedUserOperationSignedFields } from "../entryPoints/packedUserOperation";
import {
  PAYMASTER_DATA_OFFSET,
  packPaymasterAndData,
  paymasterHashPrefixWords,
  unpackPaymasterAndData,
} from "../entryPoints/packedUserOperation";
import {
  verifyingDataParameters as dataParameters,
  PAYMASTER_SIGNATURE_LENGTH,
  type SponsorshipTerms,
  verifyingHashedTerms,
  verifyingPaymasterDataWords,
} from "./paymasterAndData";

/** Four head words + the signature's length word + 65 bytes padded to three words. */
const VERIFYING_PAYMASTER_DATA_V07_LENGTH = 256;
export const VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH = PAYMASTER_DATA_OFFSET + VERIFYING_PAYMASTER_DATA_V07_LENGTH;

/** The paymaster's own gas limits, which the EntryPoint reads from paymasterAndData and the hash binds. */
export interface PaymasterGasLimits {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

export interface VerifyingPaymasterDataV07 extends SponsorshipTerms, PaymasterGasLimits {
  paymaster: Address;
  /** 65 bytes r,s,v with v 27 or 28. */
  signature: Hex;
}

export interface VerifyingHashContextV07 extends SponsorshipTerms, PaymasterGasLimits {
  chainId: number | bigint;
  paymaster: Address;
}

function checkSignature(signature: Hex): void {
  // The contract reverts on any other length; refusing here keeps a malformed signature from ever leaving the service.
  if (size(signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(`paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(signature)}`);
  }
}

/**
 * The 32 bytes the verifying signer signs with EIP-191; the contract's getHash computes the same value:
 * keccak(abi.encode(the common prefix, paymasterId, uint48 validUntil, uint48 validAfter)), all static words, written in
 * fixed layout (byte for byte viem's encodeAbiParameters, as test/chain/fixedLayoutHashesV07.test.ts checks).
 */
export function getVerifyingPaymasterHashV07(
  userOp: PackedUserOperationSignedFields,
  context: VerifyingHashContextV07,
): Hex {
  return keccakOfWords(paymasterHashPrefixWords(userOp, context) + verifyingHashedTerms(context));
}

/** Our part alone (what ERC-7677 calls paymasterData), for answers that give the paymaster fields one by one. */
export function encodeVerifyingPaymasterDataV07(data: SponsorshipTerms & { signature: Hex }): Hex {
  return `0x${verifyingPaymasterDataWords(data)}`;
}

export function encodeVerifyingPaymasterAndDataV07(data: VerifyingPaymasterDataV07): Hex {
  return packPaymasterAndData(data.paymaster, data, encodeVerifyingPaymasterDataV07(data));
}

export function decodeVerifyingPaymasterAndDataV07(paymasterAndData: Hex): VerifyingPaymasterDataV07 {
  const length = size(paymasterAndData);
  if (length !== VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH) {
    throw new RangeError(
      `verifying paymasterAndData (v0.7) must be ${VERIFYING_PAYMASTER_AND_DATA_V07_LENGTH} bytes, got ${length}`,
    );
  }
  const [paymasterId, validUntil, validAfter, signature] = decodeAbiParameters(
    dataParameters,
    slice(paymasterAndData, PAYMASTER_DATA_OFFSET),
  );
  // The right total length can still hide another signature length behind a crafted length word.
  checkSignature(signature);
  return {
    ...unpackPaymasterAndData(paymasterAndData),
    paymasterId,
    validUntil,
    validAfter,
    signature,
  };
}
