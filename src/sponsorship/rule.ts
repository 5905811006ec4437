import type { OperationReading } from "../bindings/entryPoints/operationReading";
import type { LimitClaim } from "../storage/sponsorships";
import type { SmartAccountInfo } from "./callData";
import type { SponsoredUserOperation } from "./partialUserOperationV07";
import type { SenderDeployment } from "./senderDeployment";
import type { SponsorshipSetup } from "./setup";
import type { RequestPrice } from "./usdAmount";

/** What every rule sees: the paymaster's setup, the operation and the client's sponsorship information. */
export interface RuleInput {
  setup: SponsorshipSetup;
  /** The operation, of any EntryPoint version; rules read it through `version`, never by its fields' names. */
  userOp: SponsoredUserOperation;
  /** The operation's EntryPoint version: what its fields mean (the view, the worst case, the webhook JSON). */
  version: OperationReading;
  /** The account the request names; when none, rules that read callData find its layout from the selector. */
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
  nowMs: number;
  /** When the signature would expire (unix seconds): how long a reservation can still turn into a charge. */
  validUntil: number;
  /**
   * The native token's dollar price for this request, read when a USD rule first asks. Absent: no price, so every
   * USD rule refuses.
   */
  nativeUsdPrice?: RequestPrice;
  /**
   * Whether the operation deploys its account, from the sender's code (read once, when a rule first asks). Absent only
   * where a test evaluates rules without a chain: the operation's fields then decide (senderDeploymentOf).
   */
  senderDeployment?: SenderDeployment;
}

export interface RuleOutcome {
  rule: string;
  passed: boolean;
  /** Why the rule refused, in words the dApp and its user can act on. */
  reason?: string;
}

/** What a rule answers: its outcome, and for a rule that reserved something, how to give it back. */
export interface RuleResult extends RuleOutcome {
  /** Undoes the reservation, when a later rule refuses the operation. */
  release?: () => Promise<void>;
  /**
   * For a sponsored operation: called once its answer is recorded (true), or when signing or recording failed
   * (false), so that what the rule holds in memory until the record exists can be let go.
   */
  afterRecord?: (recorded: boolean) => void;
  /** Spending-limit reservations to make with the record of the sponsorship, in its transaction. */
  claim?: LimitClaim;
}

/**
 * One sponsorship rule (docs/sponsorship-rpc.md, 'Sponsorship rules'). Rules run in order and the first refusal ends
 * the evaluation.
 */
export interface Rule {
  name: string;
  evaluate(input: RuleInput): RuleResult | Promise<RuleResult>;
}

export const pass = (rule: string): RuleOutcome => ({ rule, passed: true });
export const refuse = (rule: string, reason: string): RuleOutcome => ({ rule, passed: false, reason });
