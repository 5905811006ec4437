// The user operation of EntryPoint v0.7 and v0.8 as clients send it over JSON-RPC (the "unpacked" form: factory and
// paymaster fields apart), its packing into the PackedUserOperation the EntryPoint takes, and the EntryPoint's user
// operation hash, which is the id the operation's events carry on chain.
import { type Address, concat, encodeAbiParameters, type Hex, numberToHex, type SignedAuthorization } from "viem";
import { addressWord, bytes32Word, bytesHashWord, keccakOfWords, uintWord } from "../../abi/abiWords";
import { keccak256 } from "../../abi/keccak";
import type { LaterEntryPointVersion } from "../../config";
import { PAYMASTER_SIGNATURE_MAGIC, paymasterSignatureSuffix } from "./entryPointV09";
import { type PackedUserOperation, packAccountGasLimits, packGasFees, uint128Bytes } from "./packedUserOperation";
import type { AccountGasAndFees } from "./userOperation";

/** An EIP-7702 authorization as it travels with a v0.8 operation (`eip7702Auth`): the EOA delegates to `address`. */
export interface Eip7702Authorization {
  chainId: bigint;
  address: Address;
  nonce: bigint;
  yParity: number;
  r: Hex;
  s: Hex;
}

/**
 * A viem-signed authorization as the operation's `eip7702Auth`, for wallets (the demos, the tests) that sign with viem.
 * viem counts chainId and nonce in numbers, the operation in bigints. viem's type also admits a signature with only
 * the legacy `v`, which has no yParity; such a one is taken as yParity 0, as the demos always did.
 */
export function eip7702AuthOf(authorization: SignedAuthorization): Eip7702Authorization {
  return {
    chainId: BigInt(authorization.chainId),
    address: authorization.address,
    nonce: BigInt(authorization.nonce),
    yParity: authorization.yParity ?? 0,
    r: authorization.r,
    s: authorization.s,
  };
}

export interface UserOperationV07 extends AccountGasAndFees {
  sender: Address;
  nonce: bigint;
  /** Absent when the account exists; `0x7702` (the EIP-7702 marker) for an EOA delegating through `eip7702Auth`. */
  factory?: Address | Hex;
  factoryData?: Hex;
  callData: Hex;
  paymaster?: Address;
  paymasterVerificationGasLimit?: bigint;
  paymasterPostOpGasLimit?: bigint;
  paymasterData?: Hex;
  /** v0.9 only: the paymaster's signature, placed after paymasterData with its length and the magic. */
  paymasterSignature?: Hex;
  signature: Hex;
  eip7702Auth?: Eip7702Authorization;
}

/** The later EntryPoint versions, which share this operation (the chains file's `entryPoints` keys). */
export type EntryPointVersionV07 = LaterEntryPointVersion;

/** The EIP-7702 marker a v0.8 operation carries as its factory: 0x7702, zero-padded to 20 bytes on chain. */
const EIP7702_MARKER_PADDED = "0x7702000000000000000000000000000000000000";

export function isEip7702Marker(factory: string | undefined): boolean {
  if (factory === undefined) return false;
  const lower = factory.toLowerCase();
  return lower === "0x7702" || lower === EIP7702_MARKER_PADDED;
}

/** initCode as the bundler puts it on chain: factory ++ factoryData, or empty without a factory. */
function initCodeOf(op: Pick<UserOperationV07, "factory" | "factoryData">): Hex {
  return op.factory === undefined ? "0x" : concat([op.factory, op.factoryData ?? "0x"]);
}

type PaymasterFieldsOf = Pick<
  UserOperationV07,
  "paymaster" | "paymasterVerificationGasLimit" | "paymasterPostOpGasLimit" | "paymasterData" | "paymasterSignature"
>;

/**
 * paymasterAndData as the bundler puts it on chain; empty without a paymaster. With a paymasterSignature (v0.9), the
 * suffix follows paymasterData; `forHash` gives what v0.9's user operation hash covers instead: the magic alone.
 */
function paymasterAndDataOf(op: PaymasterFieldsOf, forHash = false): Hex {
  if (op.paymaster === undefined) return "0x";
  const suffix =
    op.paymasterSignature === undefined
      ? "0x"
      : forHash
        ? PAYMASTER_SIGNATURE_MAGIC
        : paymasterSignatureSuffix(op.paymasterSignature);
  return concat([
    op.paymaster,
    uint128Bytes("paymasterVerificationGasLimit", op.paymasterVerificationGasLimit ?? 0n),
    uint128Bytes("paymasterPostOpGasLimit", op.paymasterPostOpGasLimit ?? 0n),
    op.paymasterData ?? "0x",
    suffix,
  ]);
}

export function packUserOperation(op: UserOperationV07): PackedUserOperation {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: initCodeOf(op),
    callData: op.callData,
    accountGasLimits: packAccountGasLimits(op),
    preVerificationGas: op.preVerificationGas,
    gasFees: packGasFees(op),
    paymasterAndData: paymasterAndDataOf(op),
    signature: op.signature,
  };
}

/**
 * The initCode the EntryPoint v0.8 hashes. For an EIP-7702 operation (initCode starting with the marker, zero-padded
 * to 20 bytes) the EntryPoint puts the address the EOA delegates to in place of the first 20 bytes, and keeps the rest
 * only when initCode is longer than 20 bytes; the delegate comes from the authorization the operation carries. This
 * follows the EntryPoint, not viem: for the short marker followed by data, viem's hash keeps the data and the
 * EntryPoint's does not.
 */
function initCodeForHash(op: UserOperationV07, version: EntryPointVersionV07): Hex {
  const initCode = initCodeOf(op);
  if (version === "0.7" || !isEip7702InitCode(initCode)) return initCode;
  if (op.eip7702Auth === undefined) return EIP7702_MARKER_PADDED;
  const rest = initCode.length > 42 ? (`0x${initCode.slice(42)}` as Hex) : "0x";
  return concat([op.eip7702Auth.address, rest]);
}

/** The EntryPoint's test: at least 2 bytes, and the first 20 (zero-padded) equal the padded marker. */
function isEip7702InitCode(initCode: Hex): boolean {
  if (initCode.length < 6) return false;
  return initCode.slice(2, 42).toLowerCase().padEnd(40, "0") === EIP7702_MARKER_PADDED.slice(2);
}

const PACKED_USER_OPERATION_TYPEHASH = keccak256(
  new TextEncoder().encode(
    "PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits," +
      "uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)",
  ),
);
const DOMAIN_TYPEHASH = keccak256(
  new TextEncoder().encode("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
);
const DOMAIN_NAME_HASH = keccak256(new TextEncoder().encode("ERC4337"));
const DOMAIN_VERSION_HASH = keccak256(new TextEncoder().encode("1"));

/** v0.8's EIP-712 domain separator, fixed per chain and EntryPoint, so computed once for each. */
const domainSeparators = new Map<string, Hex>();
function domainSeparator(entryPoint: Address, chainId: number): Hex {
  const key = `${chainId}:${entryPoint.toLowerCase()}`;
  let separator = domainSeparators.get(key);
  if (separator === undefined) {
    separator = keccak256(
      encodeAbiParameters(
        [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
        [DOMAIN_TYPEHASH, DOMAIN_NAME_HASH, DOMAIN_VERSION_HASH, BigInt(chainId), entryPoint],
      ),
    );
    domainSeparators.set(key, separator);
  }
  return separator;
}

/**
 * The packed fields the signatures cover (paymasterAndData included, the account's signature not) as abi.encode writes
 * them, byte fields by their keccak-256: eight static words as hex digits without 0x (src/abi/abiWords.ts).
 */
function packedFieldsWords(op: UserOperationV07, version: EntryPointVersionV07): string {
  return (
    addressWord("sender", op.sender) +
    uintWord("nonce", op.nonce) +
    bytesHashWord("initCode", initCodeForHash(op, version)) +
    bytesHashWord("callData", op.callData) +
    bytes32Word("accountGasLimits", packAccountGasLimits(op)) +
    uintWord("preVerificationGas", op.preVerificationGas) +
    bytes32Word("gasFees", packGasFees(op)) +
    bytesHashWord("paymasterAndData", paymasterAndDataOf(op, true))
  );
}

/**
 * EntryPoint.getUserOpHash: v0.7 hashes the packed fields with the EntryPoint and chain id; v0.8 and v0.9 make it an
 * EIP-712 typed-data hash (domain "ERC4337", version "1"), so wallets can show what they sign; v0.9 leaves a
 * paymasterSignature out of it (entryPointV09.ts). Written word by word, byte for
 * byte viem's getUserOperationHash (test/chain/fixedLayoutHashesV07.test.ts).
 */
export function getUserOpHashV07(
  op: UserOperationV07,
  entryPoint: Address,
  chainId: number,
  version: EntryPointVersionV07,
): Hex {
  if (version !== "0.7") {
    const structHash = keccakOfWords(PACKED_USER_OPERATION_TYPEHASH.slice(2) + packedFieldsWords(op, version));
    return keccakOfWords(`1901${domainSeparator(entryPoint, chainId).slice(2)}${structHash.slice(2)}`);
  }
  const packedHash = keccakOfWords(packedFieldsWords(op, version));
  return keccakOfWords(packedHash.slice(2) + addressWord("entryPoint", entryPoint) + uintWord("chainId", chainId));
}

/** The operation's JSON-RPC quantity form, for bundler calls and webhooks. */
export function toRpcUserOperationV07(op: UserOperationV07): Record<string, unknown> {
  const hex = (value: bigint) => numberToHex(value);
  return {
    sender: op.sender,
    nonce: hex(op.nonce),
    ...(op.factory === undefined ? {} : { factory: op.factory, factoryData: op.factoryData ?? "0x" }),
    callData: op.callData,
    callGasLimit: hex(op.callGasLimit),
    verificationGasLimit: hex(op.verificationGasLimit),
    preVerificationGas: hex(op.preVerificationGas),
    maxFeePerGas: hex(op.maxFeePerGas),
    maxPriorityFeePerGas: hex(op.maxPriorityFeePerGas),
    ...(op.paymaster === undefined
      ? {}
      : {
          paymaster: op.paymaster,
          paymasterVerificationGasLimit: hex(op.paymasterVerificationGasLimit ?? 0n),
          paymasterPostOpGasLimit: hex(op.paymasterPostOpGasLimit ?? 0n),
          paymasterData: op.paymasterData ?? "0x",
          ...(op.paymasterSignature === undefined ? {} : { paymasterSignature: op.paymasterSignature }),
        }),
    signature: op.signature,
    ...(op.eip7702Auth === undefined
      ? {}
      : {
          eip7702Auth: {
            chainId: hex(op.eip7702Auth.chainId),
            address: op.eip7702Auth.address,
            nonce: hex(op.eip7702Auth.nonce),
            yParity: hex(BigInt(op.eip7702Auth.yParity)),
            r: op.eip7702Auth.r,
            s: op.eip7702Auth.s,
          },
        }),
  };
}
