// What the sponsorship engine (src/sponsorship/engine.ts) needs to know of an EntryPoint version, and nothing else:
// the shape of its operation, where the paymaster's fields go, the hashes, and the most an operation can cost. One
// implementation per version (v06.ts; v07.ts for v0.7 and v0.8, which differ only in the user operation hash; v09.ts); a new
// version is one more file here and one more entry in versions.ts.
import type { Address, Hex } from "viem";
import type { LaterEntryPointVersion } from "../../config";
import type { SponsoredUserOperation } from "../../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../paymasters/paymasterAndDataV07";
import type { OperationReading } from "./operationReading";

/** Where a paymaster's hash is computed: every one of our paymasters hashes the chain and itself after the operation. */
export interface PaymasterHashPlace {
  chainId: number | bigint;
  paymaster: Address;
}

/** A paymaster's part of an operation, before the version places it (v0.6: paymasterAndData; later: apart). */
export interface PaymasterPart {
  paymaster: Address;
  /** The paymaster kind's encoding of its terms and signature (src/bindings/paymasters/paymasterKind.ts). */
  paymasterData: Hex;
  /** v0.9 on, parallel signing: the paymaster's signature apart from paymasterData (entryPointV09.ts). */
  paymasterSignature?: Hex;
}

/** Our paymaster fields of a v0.7-on operation, as ERC-7677 and Pimlico answer them. */
export interface PaymasterFields extends PaymasterGasLimits {
  paymaster: Address;
  /** Our part of paymasterAndData (ERC-7677's paymasterData); `0x` when refused. */
  paymasterData: Hex;
}

/** Our part of an operation in its version's shape: v0.6's one paymasterAndData, later versions' fields apart. */
export type PaymasterAnswerPart = { paymasterAndData: Hex } | PaymasterFields;

export interface EntryPointVersion<Op extends SponsoredUserOperation> extends OperationReading {
  readonly name: "0.6" | LaterEntryPointVersion;
  /** Where the version's EntryPoint sits on every chain (its CREATE2 deployment): a chain's default for it. */
  readonly canonicalAddress: Address;
  /**
   * What every paymaster's hash starts with, as hex digits without 0x: the operation's signed fields (the paymaster
   * gas limits among them from v0.7 on), the chain id and the paymaster. The kind's own terms follow.
   */
  paymasterHashPrefix(op: Op, place: PaymasterHashPlace): string;
  /**
   * Our part as the client gets it, in the version's shape: `part` undefined when refused (v0.6 answers `0x`, later
   * versions our fields with `0x` paymasterData), `gas` the paymaster's limits where the version has them.
   */
  answerPart(paymaster: Address | undefined, part: PaymasterPart | undefined, op: Op): PaymasterAnswerPart;
  /** The EntryPoint's getUserOpHash of the operation as it will be sent: our paymaster part in, no account signature. */
  userOpHash(op: Op, part: PaymasterPart, entryPoint: Address, chainId: number): Hex;
  /**
   * Whether the prefund already counts the paymaster's postOp (v0.7 on: paymasterPostOpGasLimit); otherwise a
   * paymaster's postOp overhead comes on top of it (v0.6).
   */
  readonly prefundCountsPostOp: boolean;
  /**
   * Whether the EntryPoint reads a paymaster signature apart from paymasterData and leaves it out of the user
   * operation hash (v0.9 on), so that the paymaster can sign the user operation hash itself (parallel signing).
   */
  readonly signsInParallel: boolean;
  /**
   * Whether the EntryPoint reads a window whose ends both have bit 47 set as block numbers (v0.9 on); earlier ones
   * read every window in seconds (src/sponsorship/blockWindow.ts).
   */
  readonly readsBlockWindows: boolean;
}
