// What every sponsorship step (sponsor.ts, stub.ts, paymasterData.ts, quote.ts, parallelSigning.ts) is asked: an
// operation bound to its EntryPoint version (a StepOperation, made by the RPC method from what it parsed:
// operations/unpackedOperation.ts for v0.6's shape, operations/packedOperation.ts for v0.7 on), and the paymaster kind
// the request asks for (a KindChoice, kinds/). The steps ask these two what differs; none compares a version or a mode.
import type { Address, Hex } from "viem";
import type { PaymasterAnswerPart, PaymasterFields } from "../bindings/entryPoints/entryPointVersion";
import type { OperationReading } from "../bindings/entryPoints/operationReading";
import type { LaterEntryPointVersion } from "../bindings/entryPoints/versions";
import type { PaymasterKind, SigningWindow } from "../bindings/paymasters/paymasterKind";
import type { DecisionMode } from "../metrics/metrics";
import type { SmartAccountInfo } from "../sponsorship/callData";
import type { Eligibility } from "../sponsorship/eligibility";
import type { SponsoredUserOperation } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import type { SignedAnswer } from "./signOperation";

export type { PaymasterAnswerPart };

/** Any of our paymaster kinds, with the terms of one request. */
export type AnyPaymasterKind = PaymasterKind<SigningWindow>;

/** The EntryPoint an operation is for, and our paymaster of the kind asked there (undefined: the chain has none). */
export interface Target {
  entryPoint: Address;
  paymaster: Address | undefined;
}

/** What the request asks of the paymaster kind, and how to make the kind with its terms now. */
export interface KindChoice {
  /** The decision metrics' name of the mode. */
  readonly decisionMode: DecisionMode;
  /** How long the signature is to hold, seconds (a kind may sign a shorter window: a price's own end). */
  readonly expirySeconds: number;
  /** The client asked for its gas to be estimated (v0.6's `calculateGasLimits`); later versions estimate anyway. */
  readonly calculateGasLimits: boolean;
  readonly smartAccount?: SmartAccountInfo;
  readonly webhookData?: Record<string, unknown>;
  /** The kind with its terms now: a token's price is read here, after the request was admitted. */
  choose(ctx: ActionContext): Promise<AnyPaymasterKind>;
}

export interface StepRequest {
  operation: StepOperation;
  kind: KindChoice;
}

/** How a step wants the operation's gas. */
export interface GasWanted {
  /** Estimate where the version would (false: ERC-7677's second step, which signs exactly what its bundler sent). */
  estimate: boolean;
  /** What the gas is for: the words of a refusal differ, and a quote may assume the allowance a wallet will add. */
  purpose: "sign" | "quote";
  choice: Pick<KindChoice, "calculateGasLimits" | "expirySeconds">;
}

/** An operation of one EntryPoint version, as a step works on it. */
export interface StepOperation {
  readonly target: Target;
  readonly sender: Address;
  /** The version's reading of the operation and its prefund, for what a kind charges (maxTokenCost). */
  readonly version: OperationReading & { prefundCountsPostOp: boolean; signsInParallel: boolean };
  /** The operation with the gas the signature or quote covers: estimated, or as sent (every value required). */
  fill(ctx: ActionContext, kind: AnyPaymasterKind, wanted: GasWanted): Promise<FilledOperation>;
  /**
   * The ERC-7677 stub: our part of the final length carrying the terms the kind would sign now with a signature that
   * recovers to nobody, and whether the operation at its cheapest passes the kind's stub rules (the engine's check).
   */
  stub(ctx: ActionContext, kind: AnyPaymasterKind, choice: KindChoice): Promise<StubOutcome>;
}

export type StubOutcome = { part: PaymasterAnswerPart; eligibility: Eligibility } | { refused: string };

/** A later EntryPoint a request named, and our paymaster of the kind it asks for there. */
export interface EntryPointV07 {
  version: LaterEntryPointVersion;
  entryPoint: Address;
  paymaster: Address;
}

/** Our paymaster fields of a v0.7-on operation. */
export type PaymasterFieldsV07 = PaymasterFields;

/** An operation with its gas filled in, ready to be signed by the kind it was filled for. */
export interface FilledOperation {
  /** Every gas field and fee the signature covers. */
  userOp: SponsoredUserOperation & SignedGas;
  /** The service chose the fees (they were missing): the signature covers them, so the client must use them. */
  feesChosen: boolean;
  /** The L1 data fee's part of preVerificationGas where the service estimated the gas. */
  l1DataGas?: bigint;
  /** The engine's decision and signature, answered in the version's shape. */
  sign(ctx: ActionContext, options: SigningOptions): Promise<StepAnswer>;
  /**
   * The EntryPoint's user operation hash of this operation with our fields and a paymaster signature apart in it
   * (parallel signing's finalize); absent where the version reads no signature apart (v0.6).
   */
  userOpHashWith?(ctx: ActionContext, fields: PaymasterFields & { paymasterSignature: Hex }): Hex;
}

/** The gas fields and fees every signed operation carries. */
export interface SignedGas {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/** What a signature's record carries besides the operation: the window asked for, and SPONSORED mode's extras. */
export type SigningOptions = Pick<KindChoice, "expirySeconds" | "smartAccount" | "webhookData"> & {
  parallel?: boolean;
};

/** A decision in the version's shape: our part (signed, or `0x` data and the reason) and the account's gas. */
export type StepAnswer = Omit<SignedAnswer, "paymaster" | "paymasterData"> & { part: PaymasterAnswerPart };
