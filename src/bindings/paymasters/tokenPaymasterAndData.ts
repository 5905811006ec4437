// The token paymaster's paymasterAndData (EntryPoint v0.6), byte for byte as contracts/TokenPaymaster.sol parses it,
// the hash its verifying signer signs (docs/contracts.md, 'Token paymasterAndData layout (278 bytes)'), and the
// contract's token arithmetic, so that a quote and the contract's checks agree to the base unit.
//
//   [0:20]    token paymaster address
//   [20]      priceSource (0 = the signed exchangeRate, 1 = the oracle aggregator's price)
//   [21:213]  abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
//                        uint256 exchangeRate, uint32 priceMarkup)
//   [213:278] signature, 65 raw bytes r,s,v
import {
  type Address,
  concat,
  decodeAbiParameters,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hexToNumber,
  isAddress,
  maxUint256,
  numberToHex,
  size,
  slice,
} from "viem";
import { addressWord, keccakOfWords, uintWord } from "../../abi/abiWords";
import { paymasterHashPrefixV06, type UserOperationSignedFields } from "../entryPoints/userOperation";
import { PAYMASTER_SIGNATURE_LENGTH } from "./paymasterAndData";

export const TOKEN_PAYMASTER_AND_DATA_LENGTH = 278;
const PRICE_SOURCE_OFFSET = 20;

/** Where the exchange rate comes from: the service signs it, or the contract reads the oracle aggregator. */
export const PRICE_SOURCE = { exchangeRate: 0, oracle: 1 } as const;
export type PriceSource = (typeof PRICE_SOURCE)[keyof typeof PRICE_SOURCE];

/** priceMarkup is in millionths: 1e6 charges the cost as is, 2e6 twice; the contract refuses anything outside. */
export const MIN_PRICE_MARKUP = 1_000_000;
export const MAX_PRICE_MARKUP = 2_000_000;

/** The contract's POST_OP_OVERHEAD_GAS (test/contracts checks they agree): gas charged on top of actualGasCost. */
export const TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS = 30_000n;

const MAX_UINT48 = 2 ** 48 - 1;
/** exchangeRate is per 1e18 wei, priceMarkup per 1e6. */
const RATE_AND_MARKUP_DENOMINATOR = 10n ** 24n;

const termsParameters = [
  { name: "validUntil", type: "uint48" },
  { name: "validAfter", type: "uint48" },
  { name: "feeToken", type: "address" },
  { name: "oracleAggregator", type: "address" },
  { name: "exchangeRate", type: "uint256" },
  { name: "priceMarkup", type: "uint32" },
] as const;

/** What an ERC20-mode quote fixes besides the signature. */
export interface TokenFeeTerms {
  priceSource: PriceSource;
  /** Last second the operation is valid; 0 means no expiry (EntryPoint semantics). */
  validUntil: number;
  validAfter: number;
  feeToken: Address;
  /** The Chainlink-style aggregator read when priceSource is 1; any address (zero) otherwise. */
  oracleAggregator: Address;
  /** Fee-token base units per 1e18 wei; the charge uses it when priceSource is 0. */
  exchangeRate: bigint;
  /** Millionths, MIN_PRICE_MARKUP to MAX_PRICE_MARKUP. */
  priceMarkup: number;
}

export interface TokenPaymasterData extends TokenFeeTerms {
  paymaster: Address;
  /** 65 bytes r,s,v with v 27 or 28. */
  signature: Hex;
}

export interface TokenHashContext extends TokenFeeTerms {
  chainId: number | bigint;
  paymaster: Address;
}

/** Refuses terms the contract would refuse, so the service never signs an operation that cannot validate. */
function checkTokenFeeTerms(terms: TokenFeeTerms): void {
  if (terms.priceSource !== PRICE_SOURCE.exchangeRate && terms.priceSource !== PRICE_SOURCE.oracle) {
    throw new RangeError(`priceSource must be 0 (signed rate) or 1 (oracle), got ${terms.priceSource}`);
  }
  for (const [name, value] of [
    ["validUntil", terms.validUntil],
    ["validAfter", terms.validAfter],
  ] as const) {
    if (!Number.isInteger(value) || value < 0 || value > MAX_UINT48) {
      throw new RangeError(`${name} must be an integer number of seconds within uint48, got ${value}`);
    }
  }
  if (
    !Number.isInteger(terms.priceMarkup) ||
    terms.priceMarkup < MIN_PRICE_MARKUP ||
    terms.priceMarkup > MAX_PRICE_MARKUP
  ) {
    const range = `${MIN_PRICE_MARKUP} to ${MAX_PRICE_MARKUP}`;
    throw new RangeError(`priceMarkup must be an integer from ${range} (millionths), got ${terms.priceMarkup}`);
  }
  if (terms.exchangeRate < 0n || terms.exchangeRate > maxUint256) {
    throw new RangeError(`exchangeRate must be a uint256, got ${terms.exchangeRate}`);
  }
  if (terms.priceSource === PRICE_SOURCE.exchangeRate && terms.exchangeRate === 0n) {
    throw new RangeError("exchangeRate must not be zero when the service gives the rate (priceSource 0)");
  }
  for (const [name, value] of [
    ["feeToken", terms.feeToken],
    ["oracleAggregator", terms.oracleAggregator],
  ] as const) {
    if (!isAddress(value, { strict: false })) throw new TypeError(`${name} is not an address: ${value}`);
  }
}

/** The terms after the version's prefix in the contract's getHash: uint8 priceSource, then the six terms. */
export function tokenHashedTerms(terms: TokenFeeTerms): string {
  checkTokenFeeTerms(terms);
  return (
    uintWord("priceSource", terms.priceSource, 8) +
    uintWord("validUntil", terms.validUntil, 48) +
    uintWord("validAfter", terms.validAfter, 48) +
    addressWord("feeToken", terms.feeToken) +
    addressWord("oracleAggregator", terms.oracleAggregator) +
    uintWord("exchangeRate", terms.exchangeRate) +
    uintWord("priceMarkup", terms.priceMarkup, 32)
  );
}

/** The 32 bytes the verifying signer signs with EIP-191; the contract's getHash computes the same value. */
export function getTokenPaymasterHash(userOp: UserOperationSignedFields, context: TokenHashContext): Hex {
  return keccakOfWords(paymasterHashPrefixV06(userOp, context) + tokenHashedTerms(context));
}

/**
 * The token paymaster's data after its address, the same bytes under every EntryPoint version (what ERC-7677 calls
 * paymasterData for v0.7 and v0.8): the price source, the six terms, the raw 65-byte signature.
 */
export function encodeTokenPaymasterData(data: TokenFeeTerms & { signature: Hex }): Hex {
  checkTokenFeeTerms(data);
  // The contract reverts on any other length; refusing here keeps a malformed signature from ever leaving the service.
  if (size(data.signature) !== PAYMASTER_SIGNATURE_LENGTH) {
    throw new RangeError(
      `paymaster signature must be ${PAYMASTER_SIGNATURE_LENGTH} bytes, got ${size(data.signature)}`,
    );
  }
  // concat keeps the case of its parts: lowercase the signature so the result is uniform hex.
  return concat([
    numberToHex(data.priceSource, { size: 1 }),
    encodeAbiParameters(termsParameters, [
      data.validUntil,
      data.validAfter,
      data.feeToken,
      data.oracleAggregator,
      data.exchangeRate,
      data.priceMarkup,
    ]),
    data.signature.toLowerCase() as Hex,
  ]);
}

export function encodeTokenPaymasterAndData(data: TokenPaymasterData): Hex {
  if (!isAddress(data.paymaster, { strict: false })) {
    throw new TypeError(`paymaster is not an address: ${data.paymaster}`);
  }
  return concat([data.paymaster.toLowerCase() as Hex, encodeTokenPaymasterData(data)]);
}

/** The layout's fields as the contract reads them; the markup and rate are not judged here, only the shape. */
export function decodeTokenPaymasterAndData(paymasterAndData: Hex): TokenPaymasterData {
  const length = size(paymasterAndData);
  if (length !== TOKEN_PAYMASTER_AND_DATA_LENGTH) {
    throw new RangeError(`token paymasterAndData must be ${TOKEN_PAYMASTER_AND_DATA_LENGTH} bytes, got ${length}`);
  }
  return {
    paymaster: getAddress(slice(paymasterAndData, 0, PRICE_SOURCE_OFFSET)),
    ...decodeTokenPaymasterData(paymasterAndData, PRICE_SOURCE_OFFSET),
  };
}

/**
 * The token paymaster's data from `offset` on (after v0.6's paymaster address, or v0.7's address and gas limits): the
 * price source, the terms and the signature, the same bytes under every EntryPoint version.
 */
export function decodeTokenPaymasterData(paymasterAndData: Hex, offset: number): TokenFeeTerms & { signature: Hex } {
  const termsOffset = offset + 1;
  const signatureOffset = termsOffset + 6 * 32;
  const priceSource = hexToNumber(slice(paymasterAndData, offset, termsOffset));
  if (priceSource !== PRICE_SOURCE.exchangeRate && priceSource !== PRICE_SOURCE.oracle) {
    throw new RangeError(`priceSource must be 0 (signed rate) or 1 (oracle), got ${priceSource}`);
  }
  const [validUntil, validAfter, feeToken, oracleAggregator, exchangeRate, priceMarkup] = decodeAbiParameters(
    termsParameters,
    slice(paymasterAndData, termsOffset, signatureOffset),
  );
  return {
    priceSource,
    validUntil,
    validAfter,
    feeToken,
    oracleAggregator,
    exchangeRate,
    priceMarkup,
    signature: slice(paymasterAndData, signatureOffset),
  };
}

/** The contract's tokenAmount: fee-token base units for `weiAmount` at the rate with the markup, rounded up. */
export function tokenAmountForWei(weiAmount: bigint, exchangeRate: bigint, priceMarkup: number): bigint {
  const numerator = weiAmount * exchangeRate * BigInt(priceMarkup);
  return (numerator + RATE_AND_MARKUP_DENOMINATOR - 1n) / RATE_AND_MARKUP_DENOMINATOR;
}

type GasFields = Pick<
  UserOperationSignedFields,
  "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas"
>;

/** EntryPoint v0.6's maxCost with a paymaster: verificationGasLimit counts three times (validation, two postOps). */
export function maxGasCostWithPaymaster(op: GasFields): bigint {
  return (op.callGasLimit + 3n * op.verificationGasLimit + op.preVerificationGas) * op.maxFeePerGas;
}

/**
 * The most the token paymaster can charge for `op`: what validation requires the sender to hold (and have approved),
 * and so the quote's maximum fee. maxCost plus the post-op overhead at maxFeePerGas, converted at the rate with the
 * markup. In oracle mode the rate is the aggregator's as the contract reads it (see oracleExchangeRate).
 */
export function maxTokenCost(op: GasFields, exchangeRate: bigint, priceMarkup: number): bigint {
  const maxWei = maxGasCostWithPaymaster(op) + TOKEN_PAYMASTER_POST_OP_OVERHEAD_GAS * op.maxFeePerGas;
  return tokenAmountForWei(maxWei, exchangeRate, priceMarkup);
}

/**
 * The contract's oracleRate: an aggregator answer of whole fee tokens per whole native token (with the aggregator's
 * decimals) as fee-token base units per 1e18 wei, rounded down. A non-positive answer has no rate.
 */
export function oracleExchangeRate(answer: bigint, aggregatorDecimals: number, tokenDecimals: number): bigint {
  if (answer <= 0n) throw new RangeError(`oracle price must be positive, got ${answer}`);
  return (answer * 10n ** BigInt(tokenDecimals)) / 10n ** BigInt(aggregatorDecimals);
}
