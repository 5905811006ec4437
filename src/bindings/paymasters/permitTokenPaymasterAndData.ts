// The up-front token paymaster's paymasterAndData for EntryPoint v0.7, v0.8 and v0.9, byte for byte as
// contracts/v07/PermitTokenPaymasterV07.sol parses it, the hash its signer signs, and what postOp keeps and gives back
// (docs/contracts.md, 'PermitTokenPaymasterV07 (ERC20 mode, charged up front)').
//
//   [0:20]     paymaster address                          \
//   [20:36]    paymasterVerificationGasLimit (uint128)      } read by the EntryPoint
//   [36:52]    paymasterPostOpGasLimit (uint128)           /
//   [52]       priceSource (0 = the signed exchangeRate, 1 = the oracle aggregator's price)
//   [53:245]   abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
//                         uint256 exchangeRate, uint32 priceMarkup)          (TokenPaymasterV07's terms)
//   [245:247]  uint16 permitLength, 0 without a permit
//   then       the permit: uint256 value ++ the owner's signature (permitLength - 32 bytes)
//   then       the service's signature, 65 bytes r,s,v; nothing when v0.9's suffix carries it (parallel signing)
//   [v0.9]     paymasterSignature ++ uint16(len) ++ magic (src/bindings/entryPoints/entryPointV09.ts)
// The permit's owner is the sender, its spender the paymaster and its deadline the maximum, none of them carried.
import {
  type Address,
  concat,
  getAddress,
  type Hex,
  hexToBigInt,
  hexToNumber,
  maxUint256,
  numberToHex,
  size,
  slice,
} from "viem";
import { bytesHashWord, keccakOfWords } from "../../abi/abiWords";
import { PAYMASTER_SIGNATURE_MAGIC, paymasterSignatureSuffix } from "../entryPoints/entryPointV09";
import {
  PAYMASTER_DATA_OFFSET,
  type PackedUserOperationSignedFields,
  type PaymasterHashContext,
  packPaymasterAndData,
  paymasterHashPrefixWords,
  unpackPaymasterAndData,
} from "../entryPoints/packedUserOperation";
import { PAYMASTER_SIGNATURE_LENGTH } from "./paymasterAndData";
import type { PaymasterGasLimits } from "./paymasterAndDataV07";
import {
  decodeTokenPaymasterData,
  encodeTokenPaymasterData,
  type TokenFeeTerms,
  tokenAmountForWei,
  tokenHashedTerms,
} from "./tokenPaymasterAndData";

/** The only deadline the contract runs a permit with: a USDC-style token then never reads the clock. */
export const PERMIT_DEADLINE = maxUint256;

/** The contract's POST_OP_OVERHEAD_GAS (the contract tests check they agree): gas charged on top of actualGasCost. */
export const PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS = 30_000n;

/** What each limit below keeps above the least that works on chain, in percent (as TokenPaymasterV07's). */
export const PERMIT_TOKEN_PAYMASTER_GAS_MARGIN_PERCENT = 20n;

/**
 * paymasterVerificationGasLimit to sign: the least that passes in the costliest case measured (a fresh ERC-1271 account's
 * permit, the oracle's price, the token's first charge; test/contracts/v07/permitTokenPaymasterGas.test.ts): 137,297 on
 * v0.7 and 136,636 on v0.8 (validatePaymasterUserOp itself used 126,900), plus 20 %, to the thousand. Without a permit
 * it uses about 44,000. An account whose isValidSignature costs more (a Safe, a Kernel validator) needs more: too low a
 * limit fails validation, so a bundler refuses the operation and nothing is lost; a higher one only raises the prefund,
 * which postOp refunds.
 */
export const PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT = 165_000n;

/**
 * The least paymasterPostOpGasLimit the service may sign: the least that completes postOp's refund, 10,220 with the
 * local token (postOp used 10,152), plus 20 %, to the thousand. Below it postOp can run out of gas, and then the
 * EntryPoint undoes the execution while the whole prefund stays with the paymaster.
 */
export const PERMIT_TOKEN_PAYMASTER_MIN_POST_OP_GAS_LIMIT = 13_000n;

/**
 * paymasterPostOpGasLimit to sign: above the floor, with room for a heavier token's transfer (USDC's proxy and
 * blocklist), and under EntryPoint v0.8's 40,000 gas of unused postOp gas that it leaves unpenalised.
 */
export const PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT = 30_000n;

/** The price source, six terms words, and the permit's length: the bytes before the permit. */
const TERMS_LENGTH = 1 + 6 * 32;
const PERMIT_LENGTH_BYTES = 2;
const PERMIT_VALUE_LENGTH = 32;
const MAX_PERMIT_LENGTH = 0xffff;
/** A v0.9 suffix's fixed part: uint16 length ++ the 8 bytes of magic. */
const SUFFIX_TRAILER_LENGTH = 10;

/** An EIP-2612 permit as carried: the allowance it grants and the owner's signature (65 bytes, or ERC-1271's). */
export interface CarriedPermit {
  value: bigint;
  signature: Hex;
}

export interface PermitTokenTerms extends TokenFeeTerms {
  /** Absent when the sender's allowance already covers the maximum charge. */
  permit?: CarriedPermit;
}

export interface PermitTokenPaymasterData extends PermitTokenTerms, PaymasterGasLimits {
  paymaster: Address;
  /** The service's 65 bytes r,s,v over getHash; "0x" when a v0.9 paymasterSignature carries it instead. */
  signature: Hex;
  /** v0.9 parallel signing: the service's 65-byte signature over the userOpHash, placed after paymasterData. */
  paymasterSignature?: Hex;
}

export interface PermitTokenHashContext extends PermitTokenTerms, PaymasterHashContext {}

/** The permit's bytes: its value as one word, then its signature; no bytes without a permit. */
export function encodeCarriedPermit(permit: CarriedPermit | undefined): Hex {
  if (permit === undefined) return "0x";
  if (permit.value < 0n || permit.value > maxUint256) throw new RangeError(`permit value must be a uint256`);
  const length = PERMIT_VALUE_LENGTH + size(permit.signature);
  if (size(permit.signature) === 0) throw new RangeError("permit signature is empty");
  if (length > MAX_PERMIT_LENGTH) throw new RangeError(`permit is ${length} bytes, more than a uint16 length allows`);
  return concat([numberToHex(permit.value, { size: 32 }), permit.signature.toLowerCase() as Hex]);
}

/**
 * The 32 bytes the service signs with EIP-191 (sequential signing); the contract's getHash computes the same value:
 * TokenPaymasterV07's hash words (the common prefix, the price source, the six terms) and keccak256 of the permit's
 * bytes as a last word.
 */
export function getPermitTokenPaymasterHash(
  userOp: PackedUserOperationSignedFields,
  context: PermitTokenHashContext,
): Hex {
  return keccakOfWords(
    paymasterHashPrefixWords(userOp, context) +
      tokenHashedTerms(context) +
      bytesHashWord("permit", encodeCarriedPermit(context.permit)),
  );
}

/** paymasterData: what comes after the EntryPoint's 52 bytes, up to (not including) a v0.9 suffix. */
export function encodePermitTokenPaymasterData(data: PermitTokenTerms & { signature: Hex }): Hex {
  const signatureLength = size(data.signature);
  if (signatureLength !== 0 && signatureLength !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(
      `paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes (or none, signed apart), got ${signatureLength}`,
    );
  }
  const permit = encodeCarriedPermit(data.permit);
  // TokenPaymasterV07's encoder lays out the price source and terms; its signature slot is replaced here.
  const terms = slice(encodeTokenPaymasterData({ ...data, signature: `0x${"00".repeat(65)}` }), 0, TERMS_LENGTH);
  return concat([
    terms,
    numberToHex(size(permit), { size: PERMIT_LENGTH_BYTES }),
    permit,
    data.signature.toLowerCase() as Hex,
  ]);
}

/** The whole paymasterAndData; with a paymasterSignature, v0.9's suffix after paymasterData (signature then empty). */
export function encodePermitTokenPaymasterAndData(data: PermitTokenPaymasterData): Hex {
  if (data.paymasterSignature !== undefined && size(data.signature) !== 0) {
    throw new RangeError("a paymaster signature goes in paymasterData or in the v0.9 suffix, not both");
  }
  const packed = packPaymasterAndData(data.paymaster, data, encodePermitTokenPaymasterData(data));
  return data.paymasterSignature === undefined
    ? packed
    : concat([packed, paymasterSignatureSuffix(data.paymasterSignature.toLowerCase() as Hex)]);
}

/** The layout's fields as the contract reads them; the terms are not judged here, only the shape. */
export function decodePermitTokenPaymasterAndData(paymasterAndData: Hex): PermitTokenPaymasterData {
  let end = size(paymasterAndData);
  let paymasterSignature: Hex | undefined;
  if (
    end >= PAYMASTER_DATA_OFFSET + SUFFIX_TRAILER_LENGTH &&
    slice(paymasterAndData, end - 8) === PAYMASTER_SIGNATURE_MAGIC
  ) {
    const length = hexToNumber(slice(paymasterAndData, end - SUFFIX_TRAILER_LENGTH, end - 8));
    const start = end - SUFFIX_TRAILER_LENGTH - length;
    if (start < PAYMASTER_DATA_OFFSET) throw new RangeError("paymasterSignature longer than paymasterAndData");
    paymasterSignature = slice(paymasterAndData, start, end - SUFFIX_TRAILER_LENGTH);
    end = start;
  }
  const permitStart = PAYMASTER_DATA_OFFSET + TERMS_LENGTH + PERMIT_LENGTH_BYTES;
  if (end < permitStart) {
    throw new RangeError(`permit token paymasterAndData must be at least ${permitStart} bytes, got ${end}`);
  }
  const permitLength = hexToNumber(slice(paymasterAndData, permitStart - PERMIT_LENGTH_BYTES, permitStart));
  if ((permitLength !== 0 && permitLength <= PERMIT_VALUE_LENGTH) || permitStart + permitLength > end) {
    throw new RangeError(`permit length ${permitLength} does not fit paymasterData`);
  }
  // TokenPaymasterV07's decoder reads the price source and terms; what it takes for its signature is the rest here.
  const { signature: _rest, ...terms } = decodeTokenPaymasterData(paymasterAndData, PAYMASTER_DATA_OFFSET);
  const permitEnd = permitStart + permitLength;
  return {
    ...unpackPaymasterAndData(paymasterAndData),
    ...terms,
    feeToken: getAddress(terms.feeToken),
    ...(permitLength === 0
      ? {}
      : {
          permit: {
            value: hexToBigInt(slice(paymasterAndData, permitStart, permitStart + PERMIT_VALUE_LENGTH)),
            signature: slice(paymasterAndData, permitStart + PERMIT_VALUE_LENGTH, permitEnd),
          },
        }),
    signature: permitEnd === end ? "0x" : slice(paymasterAndData, permitEnd, end),
    ...(paymasterSignature === undefined ? {} : { paymasterSignature }),
  };
}

/** What postOp keeps of the prefund and gives back, in tokens. */
export interface PermitTokenSettlement {
  charge: bigint;
  refund: bigint;
}

/**
 * postOp's arithmetic: actualGasCost plus the overhead at the fee paid, converted at the rate with the markup, never
 * above the prefund taken in validation (the prefund is maxTokenCostV07 of the operation); the rest is refunded.
 */
export function permitTokenSettlement(
  actualGasCost: bigint,
  feePerGas: bigint,
  terms: { exchangeRate: bigint; priceMarkup: number; prefund: bigint },
): PermitTokenSettlement {
  const cost = tokenAmountForWei(
    actualGasCost + PERMIT_TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * feePerGas,
    terms.exchangeRate,
    terms.priceMarkup,
  );
  if (cost > terms.prefund) return { charge: terms.prefund, refund: 0n };
  return { charge: cost, refund: terms.prefund - cost };
}
