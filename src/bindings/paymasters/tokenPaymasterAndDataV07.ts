// The token paymaster's paymasterAndData for EntryPoint v0.7 and v0.8, byte for byte as
// contracts/v07/TokenPaymasterV07.sol parses it, the hash its verifying signer signs, the most it charges, and the gas
// limits the service should sign for it (docs/contracts.md, 'TokenPaymasterV07 (EntryPoint v0.7 and v0.8)').
//
//   [0:20]    token paymaster address                  \
//   [20:36]   paymasterVerificationGasLimit (uint128)    } read by the EntryPoint
//   [36:52]   paymasterPostOpGasLimit (uint128)         /
//   [52]      priceSource (0 = the signed exchangeRate, 1 = the oracle aggregator's price)
//   [53:245]  abi.encode(uint48 validUntil, uint48 validAfter, address feeToken, address oracleAggregator,
//                        uint256 exchangeRate, uint32 priceMarkup)
//   [245:310] signature, 65 raw bytes r,s,v
// Bytes 52 on are the v0.6 token paymasterAndData after its address, unchanged (src/bindings/paymasters/tokenPaymasterAndData.ts).
import { type Address, type Hex, size } from "viem";
import { keccakOfWords } from "../../abi/abiWords";
import type { PackedUserOperationSignedFields } from "../entryPoints/packedUserOperation";
import {
  PAYMASTER_DATA_OFFSET,
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

/** Our part after the EntryPoint's 52 bytes: price source, six terms words, the raw signature. */
export const TOKEN_PAYMASTER_DATA_V07_LENGTH = 1 + 6 * 32 + PAYMASTER_SIGNATURE_LENGTH;
export const TOKEN_PAYMASTER_AND_DATA_V07_LENGTH = PAYMASTER_DATA_OFFSET + TOKEN_PAYMASTER_DATA_V07_LENGTH;

/**
 * The contract's POST_OP_OVERHEAD_GAS (test/contracts/v07 checks they agree): gas charged on top of postOp's
 * actualGasCost, for postOp itself and the EntryPoint's accounting after it (measured 18,565 on EntryPoint 0.8.0).
 */
export const TOKEN_PAYMASTER_V07_POST_OP_OVERHEAD_GAS = 30_000n;

/**
 * What each of the limits below keeps above the least that works on chain, in percent. Measured in the costliest case
 * (test/contracts/v07/tokenPaymasterGas.test.ts, after the signer-set conversion): the price read from the oracle (a
 * cold aggregator) and a token's first charge (this contract's token balance written from zero), for a fresh account's
 * first operation, mined with ever smaller limits on EntryPoint 0.7.0 and 0.8.0.
 */
export const TOKEN_PAYMASTER_GAS_MARGIN_PERCENT = 20n;

/**
 * paymasterVerificationGasLimit to sign for this paymaster: the least that passes, 46,056 on v0.7 and 45,361 on v0.8
 * (validatePaymasterUserOp itself used about 35,600; the EntryPoint counts its own work around the call against the
 * limit), plus 20 %, to the thousand. Too low fails validation and the bundler refuses the operation. Unused
 * verification gas costs no penalty, but the limit enters the prefund and so the maximum charge the sender must hold.
 */
export const TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT = 56_000n;

/**
 * paymasterPostOpGasLimit to sign for this paymaster: the least that completes a token's first charge, 37,406 on both
 * versions (postOp used 37,351; later charges use about 17,400), plus 20 %, to the thousand. The account cannot
 * estimate our postOp, and the hash binds the limit, so the service's value is final. Too low reverts postOp, which
 * reverts the user's call while the deposit pays its gas. EntryPoint v0.7 charges 10 % of the unused part (759 gas on a
 * first charge, about 2,800 on later ones); v0.8 charges nothing while under 40,000 gas are unused, which this keeps.
 */
export const TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT = 45_000n;

export interface TokenPaymasterDataV07 extends TokenFeeTerms, PaymasterGasLimits {
  paymaster: Address;
  /** 65 bytes r,s,v with v 27 or 28. */
  signature: Hex;
}

export interface TokenHashContextV07 extends TokenFeeTerms, PaymasterGasLimits {
  chainId: number | bigint;
  paymaster: Address;
}

/**
 * The 32 bytes the verifying signer signs with EIP-191; the contract's getHash computes the same value:
 * keccak(abi.encode(the common prefix, uint8 priceSource, the six terms)), all static words, written in fixed layout
 * (byte for byte viem's encodeAbiParameters, as test/chain/fixedLayoutHashesV07.test.ts checks).
 */
export function getTokenPaymasterHashV07(userOp: PackedUserOperationSignedFields, context: TokenHashContextV07): Hex {
  return keccakOfWords(paymasterHashPrefixWords(userOp, context) + tokenHashedTerms(context));
}

export function encodeTokenPaymasterAndDataV07(data: TokenPaymasterDataV07): Hex {
  return packPaymasterAndData(data.paymaster, data, encodeTokenPaymasterData(data));
}

/** The layout's fields as the contract reads them; the markup and rate are not judged here, only the shape. */
export function decodeTokenPaymasterAndDataV07(paymasterAndData: Hex): TokenPaymasterDataV07 {
  const length = size(paymasterAndData);
  if (length !== TOKEN_PAYMASTER_AND_DATA_V07_LENGTH) {
    throw new RangeError(
      `token paymasterAndData (v0.7) must be ${TOKEN_PAYMASTER_AND_DATA_V07_LENGTH} bytes, got ${length}`,
    );
  }
  return {
    ...unpackPaymasterAndData(paymasterAndData),
    ...decodeTokenPaymasterData(paymasterAndData, PAYMASTER_DATA_OFFSET),
  };
}

/** The five gas limits of a v0.7/v0.8 operation, unpacked, and the fee that prices them. */
export interface GasLimitsV07 extends PaymasterGasLimits {
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}

/** EntryPoint v0.7/v0.8's prefund (maxCost in validatePaymasterUserOp): every gas limit once, at maxFeePerGas. */
export function maxGasCostV07(op: GasLimitsV07): bigint {
  const gas =
    op.verificationGasLimit +
    op.callGasLimit +
    op.paymasterVerificationGasLimit +
    op.paymasterPostOpGasLimit +
    op.preVerificationGas;
  return gas * op.maxFeePerGas;
}

/**
 * The most the token paymaster can charge for `op`: the prefund converted at the rate with the markup. Validation
 * requires the sender to hold that much, so it is the quote's maximum fee and what the account approves. In oracle
 * mode the rate is the aggregator's as the contract reads it (oracleExchangeRate).
 */
export function maxTokenCostV07(op: GasLimitsV07, exchangeRate: bigint, priceMarkup: number): bigint {
  return tokenAmountForWei(maxGasCostV07(op), exchangeRate, priceMarkup);
}

/** What postOp charges, in tokens: actualGasCost plus the overhead at the fee paid, converted, never above `max`. */
export function tokenChargeV07(
  actualGasCost: bigint,
  feePerGas: bigint,
  terms: { exchangeRate: bigint; priceMarkup: number; maxTokenCost: bigint },
): bigint {
  const amount = tokenAmountForWei(
    actualGasCost + TOKEN_PAYMASTER_V07_POST_OP_OVERHEAD_GAS * feePerGas,
    terms.exchangeRate,
    terms.priceMarkup,
  );
  if (amount > terms.maxTokenCost) return terms.maxTokenCost;
  return amount;
}
