// The user operation as EntryPoint v0.7 and v0.8 take it (PackedUserOperation): pairs of 128-bit gas values share one
// 32-byte word, and the factory and paymaster fields travel inside initCode and paymasterAndData.
import { type Address, concat, type Hex, isAddress, numberToHex } from "viem";
import { keccak256 } from "./keccak";

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

/** One 16-byte big-endian half of a packed word; refuses what does not fit rather than silently truncating it. */
export function uint128Bytes(name: string, value: bigint): Hex {
  if (value < 0n || value > MAX_UINT128) throw new RangeError(`${name} must fit in uint128, got ${value}`);
  return numberToHex(value, { size: 16 });
}

export function packAccountGasLimits(limits: { verificationGasLimit: bigint; callGasLimit: bigint }): Hex {
  return concat([
    uint128Bytes("verificationGasLimit", limits.verificationGasLimit),
    uint128Bytes("callGasLimit", limits.callGasLimit),
  ]);
}

export function packGasFees(fees: { maxPriorityFeePerGas: bigint; maxFeePerGas: bigint }): Hex {
  return concat([
    uint128Bytes("maxPriorityFeePerGas", fees.maxPriorityFeePerGas),
    uint128Bytes("maxFeePerGas", fees.maxFeePerGas),
  ]);
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
export const paymasterHashPrefixParameters = [
  { name: "sender", type: "address" },
  { name: "nonce", type: "uint256" },
  { name: "initCodeHash", type: "bytes32" },
  { name: "callDataHash", type: "bytes32" },
  { name: "accountGasLimits", type: "bytes32" },
  { name: "preVerificationGas", type: "uint256" },
  { name: "gasFees", type: "bytes32" },
  { name: "paymasterVerificationGasLimit", type: "uint128" },
  { name: "paymasterPostOpGasLimit", type: "uint128" },
  { name: "chainId", type: "uint256" },
  { name: "paymaster", type: "address" },
] as const;

export interface PaymasterHashContext {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  chainId: number | bigint;
  paymaster: Address;
}

/** The values of paymasterHashPrefixParameters; the gas limits are range-checked as the uint128 they are encoded as. */
export function paymasterHashPrefixValues(userOp: PackedUserOperationSignedFields, context: PaymasterHashContext) {
  uint128Bytes("paymasterVerificationGasLimit", context.paymasterVerificationGasLimit);
  uint128Bytes("paymasterPostOpGasLimit", context.paymasterPostOpGasLimit);
  return [
    userOp.sender,
    userOp.nonce,
    keccak256(userOp.initCode),
    keccak256(userOp.callData),
    userOp.accountGasLimits,
    userOp.preVerificationGas,
    userOp.gasFees,
    context.paymasterVerificationGasLimit,
    context.paymasterPostOpGasLimit,
    BigInt(context.chainId),
    context.paymaster,
  ] as const;
}
