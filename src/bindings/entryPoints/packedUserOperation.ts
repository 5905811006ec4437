// The user operation as EntryPoint v0.7 and v0.8 take it (PackedUserOperation): pairs of 128-bit gas values share one
// 32-byte word, and the factory and paymaster fields travel inside initCode and paymasterAndData.
import { type Address, concat, getAddress, type Hex, hexToBigInt, isAddress, slice } from "viem";
import { addressWord, bytes32Word, uintWord } from "../../abi/abiWords";
import { accountWords } from "./userOperation";

/** Field names match the ABI struct, so viem encodes it as is. */
export interface PackedUserOperation {
  sender: Address;
  nonce: bigint;
  /** factory (20 bytes) ++ factoryData, or empty when the account exists. */
  initCode: Hex;
  callData: Hex;
  /** verificationGasLimit (high 128 bits) ++ callGasLimit (low 128 bits). */
  accountGasLimits: Hex;
  preVerificationGas: bigint;
  /** maxPriorityFeePerGas (high 128 bits) ++ maxFeePerGas (low 128 bits). */
  gasFees: Hex;
  /** paymaster (20) ++ paymasterVerificationGasLimit (16) ++ paymasterPostOpGasLimit (16) ++ paymasterData. */
  paymasterAndData: Hex;
  signature: Hex;
}

/** The fields a paymaster signature covers as they are: all but the two that carry signatures. */
export type PackedUserOperationSignedFields = Omit<PackedUserOperation, "paymasterAndData" | "signature">;

const MAX_UINT128 = 2n ** 128n - 1n;

/** One 16-byte big-endian half of a packed word, as 32 hex digits; refuses what does not fit rather than truncating. */
function uint128Digits(name: string, value: bigint): string {
  if (value < 0n || value > MAX_UINT128) throw new RangeError(`${name} must fit in uint128, got ${value}`);
  return value.toString(16).padStart(32, "0");
}

/** One 16-byte big-endian half of a packed word, as hex. */
export function uint128Bytes(name: string, value: bigint): Hex {
  return `0x${uint128Digits(name, value)}`;
}

export function packAccountGasLimits(limits: { verificationGasLimit: bigint; callGasLimit: bigint }): Hex {
  return `0x${uint128Digits("verificationGasLimit", limits.verificationGasLimit)}${uint128Digits("callGasLimit", limits.callGasLimit)}`;
}

export function packGasFees(fees: { maxPriorityFeePerGas: bigint; maxFeePerGas: bigint }): Hex {
  return `0x${uint128Digits("maxPriorityFeePerGas", fees.maxPriorityFeePerGas)}${uint128Digits("maxFeePerGas", fees.maxFeePerGas)}`;
}

/**
 * EntryPoint v0.8's EIP-7702 factory marker in the short form wallets send. viem (and so Alto) pack it as given, the two
 * bytes 0x7702 (the EntryPoint reads them as the marker, zero-padded to 20 bytes), and the paymaster's hash covers the
 * initCode as packed: the service must pack it the same way.
 */
export const EIP7702_FACTORY_MARKER = "0x7702";

/** initCode from the unpacked form's factory and factoryData; no factory means no initCode. */
export function packInitCode(
  factory: Address | typeof EIP7702_FACTORY_MARKER | undefined,
  factoryData: Hex = "0x",
): Hex {
  if (factory === undefined) return "0x";
  if (factory === EIP7702_FACTORY_MARKER) return concat([EIP7702_FACTORY_MARKER, factoryData]);
  if (!isAddress(factory, { strict: false })) throw new TypeError(`factory is not an address: ${factory}`);
  return concat([factory.toLowerCase() as Address, factoryData]);
}

/**
 * What both of our v0.7/v0.8 paymasters hash first, in this order: the packed operation's signed fields (byte fields by
 * their keccak-256), the two paymaster gas limits, the chain id and the paymaster; each contract's own terms follow.
 */
export interface PaymasterHashContext {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  chainId: number | bigint;
  paymaster: Address;
}

/** A uint128's word is its 32 digits after 32 zeros. */
const UINT128_WORD_PADDING = "0".repeat(32);

/**
 * abi.encode(sender, nonce, keccak(initCode), keccak(callData), accountGasLimits, preVerificationGas, gasFees,
 * uint128 paymasterVerificationGasLimit, uint128 paymasterPostOpGasLimit, chainId, paymaster): eleven static words as
 * hex digits without 0x, written word by word (src/abi/abiWords.ts; pinned to viem's encodeAbiParameters by
 * test/chain/fixedLayoutHashesV07.test.ts).
 */
export function paymasterHashPrefixWords(
  userOp: PackedUserOperationSignedFields,
  context: PaymasterHashContext,
): string {
  return (
    accountWords(userOp) +
    bytes32Word("accountGasLimits", userOp.accountGasLimits) +
    uintWord("preVerificationGas", userOp.preVerificationGas) +
    bytes32Word("gasFees", userOp.gasFees) +
    UINT128_WORD_PADDING +
    uint128Digits("paymasterVerificationGasLimit", context.paymasterVerificationGasLimit) +
    UINT128_WORD_PADDING +
    uint128Digits("paymasterPostOpGasLimit", context.paymasterPostOpGasLimit) +
    uintWord("chainId", context.chainId) +
    addressWord("paymaster", context.paymaster)
  );
}

/** Where a paymaster's own data starts in v0.7/v0.8 paymasterAndData: after its address and its two gas limits. */
export const PAYMASTER_DATA_OFFSET = 52;

/** v0.7/v0.8 paymasterAndData: the paymaster, its two gas limits (read by the EntryPoint), then its own data. */
export function packPaymasterAndData(
  paymaster: Address,
  limits: { paymasterVerificationGasLimit: bigint; paymasterPostOpGasLimit: bigint },
  paymasterData: Hex,
): Hex {
  // concat keeps the case of its parts: lowercase the checksummed address so the result is uniform hex.
  if (!isAddress(paymaster, { strict: false })) throw new TypeError(`paymaster is not an address: ${paymaster}`);
  return concat([
    paymaster.toLowerCase() as Address,
    uint128Bytes("paymasterVerificationGasLimit", limits.paymasterVerificationGasLimit),
    uint128Bytes("paymasterPostOpGasLimit", limits.paymasterPostOpGasLimit),
    paymasterData,
  ]);
}

/** What the EntryPoint reads of v0.7/v0.8 paymasterAndData before the paymaster's own data. */
export function unpackPaymasterAndData(paymasterAndData: Hex) {
  return {
    paymaster: getAddress(slice(paymasterAndData, 0, 20)),
    paymasterVerificationGasLimit: hexToBigInt(slice(paymasterAndData, 20, 36)),
    paymasterPostOpGasLimit: hexToBigInt(slice(paymasterAndData, 36, PAYMASTER_DATA_OFFSET)),
  };
}
