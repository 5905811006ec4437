// What every sponsorship step (sponsor.ts, stub.ts, paymasterData.ts, quote.ts) is asked: an operation for one
// EntryPoint version, and which of our paymasters is to pay, with its terms. The RPC methods read their params into
// this; each step then picks the version's and the kind's implementations and calls the engine.
import type { Address, Hex } from "viem";
import type { LaterEntryPointVersion } from "../bindings/entryPoints/versions";
import type { PaymasterGasLimits } from "../bindings/paymasters/paymasterAndDataV07";
import type { SmartAccountInfo } from "../sponsorship/callData";
import type { PartialUserOperation } from "../sponsorship/partialUserOperation";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";

/** A later EntryPoint a request named, and our paymaster of the kind it asks for there. */
export interface EntryPointV07 {
  version: LaterEntryPointVersion;
  entryPoint: Address;
  paymaster: Address;
}

/**
 * The operation, by version: v0.6's is signed for the chain's own EntryPoint and paymasters; a later one's for the
 * EntryPoint it named (`target`). The account's signature as sent only sizes a gas estimate.
 */
export type VersionedOperation =
  | { version: "0.6"; userOp: PartialUserOperation; signature?: Hex }
  | { version: LaterEntryPointVersion; target: EntryPointV07; userOp: PartialUserOperationV07; signature?: Hex };

/** SPONSORED mode: our verifying paymaster, the dApp's deposit pays, the setup's rules decide. */
export interface SponsoredKind {
  mode: "SPONSORED";
  expirySeconds: number;
  /** v0.6: estimate the gas first (later versions estimate with the chain's bundler whenever one is configured). */
  calculateGasLimits?: boolean;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
}

/** ERC20 mode: our token paymaster, the sender pays in the fee token named. */
export interface TokenKind {
  mode: "ERC20";
  expirySeconds: number;
  /** v0.6: estimate the gas first. */
  calculateGasLimits?: boolean;
  /** The fee token as the client sent it: checked here to be one of the chain's. */
  feeToken: string | null | undefined;
  /** Where the request names it, for the error that refuses it. */
  feeTokenLabel: string;
}

export type StepRequest = VersionedOperation & { mode: SponsoredKind | TokenKind };

/** Our paymaster fields of a v0.7/v0.8 operation, as ERC-7677 and Pimlico answer them. */
export interface PaymasterFieldsV07 extends PaymasterGasLimits {
  paymaster: Address;
  /** Our part of paymasterAndData (ERC-7677's paymasterData); `0x` when refused. */
  paymasterData: Hex;
}

/** Our part of an operation in its version's shape: v0.6's one paymasterAndData, later versions' fields apart. */
export type VersionedPaymasterPart =
  | { version: "0.6"; paymasterAndData: Hex }
  | { version: LaterEntryPointVersion; fields: PaymasterFieldsV07 };
