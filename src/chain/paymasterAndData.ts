// The verifying paymaster's paymasterAndData (EntryPoint v0.6), byte for byte as contracts/VerifyingPaymaster.sol
// parses it, and the hash its verifying signer signs (docs/contracts.md, 'Verifying paymasterAndData
// layout (276 bytes)' and 'Verifying paymaster hash').
//
//   [0:20]   paymaster address
//   [20:276] abi.encode(address paymasterId, uint48 validUntil, uint48 validAfter, bytes signature)
import {
  type Address,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  type Hex,
  isAddress,
  size,
  slice,
} from "viem";
import { keccak256 } from "./keccak";
import { signedFieldParameters, signedFieldValues, type UserOperationSignedFields } from "./userOperation";

/** 20 address bytes + four head words + the signature's length word + 65 bytes padded to three words. */
export const VERIFYING_PAYMASTER_AND_DATA_LENGTH = 276;
export const PAYMASTER_SIGNATURE_LENGTH = 65;

const MAX_UINT48 = 2 ** 48 - 1;

const dataParameters = [
  { name: "paymasterId", type: "address" },
  { name: "validUntil", type: "uint48" },
  { name: "validAfter", type: "uint48" },
  { name: "signature", type: "bytes" },
] as const;

const hashParameters = [
  ...signedFieldParameters,
  { name: "chainId", type: "uint256" },
  { name: "paymaster", type: "address" },
  { name: "paymasterId", type: "address" },
  { name: "validUntil", type: "uint48" },
  { name: "validAfter", type: "uint48" },
] as const;

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

/** The 32 bytes the verifying signer signs with EIP-191; the contract's getHash computes the same value. */
export function getVerifyingPaymasterHash(userOp: UserOperationSignedFields, context: VerifyingHashContext): Hex {
  checkWindow(context);
  return keccak256(
    encodeAbiParameters(hashParameters, [
      ...signedFieldValues(userOp),
      BigInt(context.chainId),
      context.paymaster,
      context.paymasterId,
      context.validUntil,
      context.validAfter,
    ]),
  );
}

export function encodeVerifyingPaymasterAndData(data: VerifyingPaymasterData): Hex {
  checkWindow(data);
  // The contract reverts on any other length; refusing here keeps a malformed signature from ever leaving the service.
  if (size(data.signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(
      `paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(data.signature)}`,
    );
  }
  // concat keeps the case of its parts: lowercase the checksummed address so the result is uniform hex.
  if (!isAddress(data.paymaster, { strict: false }))
    throw new TypeError(`paymaster is not an address: ${data.paymaster}`);
  return concat([
    data.paymaster.toLowerCase() as Address,
    encodeAbiParameters(dataParameters, [data.paymasterId, data.validUntil, data.validAfter, data.signature]),
  ]);
}

export function decodeVerifyingPaymasterAndData(paymasterAndData: Hex): VerifyingPaymasterData {
  const length = size(paymasterAndData);
  if (length !== VERIFYING_PAYMASTER_AND_DATA_LENGTH) {
    throw new RangeError(
      `verifying paymasterAndData must be ${VERIFYING_PAYMASTER_AND_DATA_LENGTH} bytes, got ${length}`,
    );
  }
  const [paymasterId, validUntil, validAfter, signature] = decodeAbiParameters(
    dataParameters,
    slice(paymasterAndData, 20),
  );
  // The right total length can still hide another signature length behind a crafted length word.
  if (size(signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(`paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(signature)}`);
  }
  return { paymaster: getAddress(slice(paymasterAndData, 0, 20)), paymasterId, validUntil, validAfter, signature };
}
