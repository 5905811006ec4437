// The verifying paymaster's paymasterAndData (EntryPoint v0.6), byte for byte as contracts/VerifyingPaymaster.sol
// parses it, and the hash its verifying signer signs (docs/contracts.md, 'Verifying paymasterAndData
// layout (276 bytes)' and 'Verifying paymaster hash').
//
//   [0:20]   paymaster address
//   [20:276] abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
import { type Address, decodeAbiParameters, getAddress, type Hex, size, slice } from "viem";
import { addressWord, keccakOfWords, uintWord } from "../../abi/abiWords";
import { paymasterHashPrefixV06, type UserOperationSignedFields } from "../entryPoints/userOperation";

/** 20 address bytes + four head words + the signature's length word + 65 bytes padded to three words. */
export const VERIFYING_PAYMASTER_AND_DATA_LENGTH = 276;
export const PAYMASTER_SIGNATURE_LENGTH = 65;

const MAX_UINT48 = 2 ** 48 - 1;

/** The data after the address (v0.6) or after the gas limits (v0.7 on), as abi.encode lays it out. */
export const verifyingDataParameters = [
  { name: "paymasterId", type: "address" },
  { name: "validUntil", type: "uint48" },
  { name: "validAfter", type: "uint48" },
  { name: "signature", type: "bytes" },
] as const;

/** The signature's place in the tail (four head words in) and its length, as abi.encode writes them. */
const SIGNATURE_OFFSET_AND_LENGTH = uintWord("offset", 128) + uintWord("length", PAYMASTER_SIGNATURE_LENGTH);
/** A 65-byte signature padded to three words. */
const SIGNATURE_PADDING = "0".repeat((96 - PAYMASTER_SIGNATURE_LENGTH) * 2);

/** What a sponsorship decides besides the signature: whose deposit pays, and the validity window (unix seconds). */
export interface SponsorshipTerms {
  /** The dApp's funding wallet: the key of its deposit in the paymaster contract. */
  paymasterId: Address;
  /** Last second the operation is valid; 0 means no expiry (EntryPoint semantics). */
  validUntil: number;
  validAfter: number;
}

export interface VerifyingPaymasterData extends SponsorshipTerms {
  paymaster: Address;
  /** 65 bytes r,s,v with v 27 or 28. */
  signature: Hex;
}

export interface VerifyingHashContext extends SponsorshipTerms {
  chainId: number | bigint;
  paymaster: Address;
}

function checkWindow({ validUntil, validAfter }: SponsorshipTerms): void {
  for (const [name, value] of [
    ["validUntil", validUntil],
    ["validAfter", validAfter],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > MAX_UINT48) {
      throw new RangeError(`${name} must be an integer number of seconds within uint48, got ${value}`);
    }
  }
}

/** The terms after the version's prefix in the contract's getHash: paymasterId, uint48 validUntil, uint48 validAfter. */
export function verifyingHashedTerms(terms: SponsorshipTerms): string {
  checkWindow(terms);
  return (
    addressWord("paymasterId", terms.paymasterId) +
    uintWord("validUntil", terms.validUntil, 48) +
    uintWord("validAfter", terms.validAfter, 48)
  );
}

/**
 * The 32 bytes the verifying signer signs with EIP-191; the contract's getHash computes the same value:
 * keccak(abi.encode(signed fields, chainId, paymaster, paymasterId, uint48 validUntil, uint48 validAfter)), all static
 * words, written in fixed layout (test/chain/fixedLayoutHashes.test.ts checks it against viem's encodeAbiParameters).
 */
export function getVerifyingPaymasterHash(userOp: UserOperationSignedFields, context: VerifyingHashContext): Hex {
  return keccakOfWords(paymasterHashPrefixV06(userOp, context) + verifyingHashedTerms(context));
}

/**
 * abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature) in fixed layout, as hex digits
 * without 0x: what follows the paymaster's address in v0.6's paymasterAndData, and the whole of v0.7's paymasterData.
 */
export function verifyingPaymasterDataWords(data: SponsorshipTerms & { signature: Hex }): string {
  checkWindow(data);
  // The contract reverts on any other length; refusing here keeps a malformed signature from ever leaving the service.
  if (size(data.signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(
      `paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(data.signature)}`,
    );
  }
  if (!/^0x[0-9a-fA-F]*$/.test(data.signature)) throw new TypeError("paymaster signature is not hex");
  // Lowercase throughout, so the result is uniform hex.
  return (
    addressWord("paymasterId", data.paymasterId) +
    uintWord("validUntil", data.validUntil, 48) +
    uintWord("validAfter", data.validAfter, 48) +
    SIGNATURE_OFFSET_AND_LENGTH +
    data.signature.slice(2).toLowerCase() +
    SIGNATURE_PADDING
  );
}

/**
 * The same paymasterData with an empty signature (abi.encode of a zero-length bytes): EntryPoint v0.9's parallel
 * signing, where the signature travels after paymasterData (VerifyingPaymasterV09 refuses one in both places).
 */
export function verifyingTermsAloneWords(terms: SponsorshipTerms): string {
  checkWindow(terms);
  return (
    addressWord("paymasterId", terms.paymasterId) +
    uintWord("validUntil", terms.validUntil, 48) +
    uintWord("validAfter", terms.validAfter, 48) +
    uintWord("offset", 128) +
    uintWord("length", 0)
  );
}

export function encodeVerifyingPaymasterAndData(data: VerifyingPaymasterData): Hex {
  const words = verifyingPaymasterDataWords(data);
  // The checksummed address lowercased too: an address word's last 40 digits.
  return `0x${addressWord("paymaster", data.paymaster).slice(24)}${words}`;
}

export function decodeVerifyingPaymasterAndData(paymasterAndData: Hex): VerifyingPaymasterData {
  const length = size(paymasterAndData);
  if (length !== VERIFYING_PAYMASTER_AND_DATA_LENGTH) {
    throw new RangeError(
      `verifying paymasterAndData must be ${VERIFYING_PAYMASTER_AND_DATA_LENGTH} bytes, got ${length}`,
    );
  }
  const [paymasterId, validUntil, validAfter, signature] = decodeAbiParameters(
    verifyingDataParameters,
    slice(paymasterAndData, 20),
  );
  // The right total length can still hide another signature length behind a crafted length word.
  if (size(signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(`paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(signature)}`);
  }
  return { paymaster: getAddress(slice(paymasterAndData, 0, 20)), paymasterId, validUntil, validAfter, signature };
}
