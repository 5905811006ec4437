import type { Metrics } from "../metrics/metrics";
import type { LimitLedger } from "../storage/limitLedger";
import type { ListenAddress } from "../webhooks/addressGuard";
import type { WebhookSettings } from "../webhooks/settings";
import type { Rule } from "./rule";
import { contractWhitelist } from "./rules/contractWhitelist";
import { type DepositRuleDeps, depositReadRule, depositRule, InFlightCharges } from "./rules/deposit";
import { fundingAndRules } from "./rules/fundingAndRules";
import { maxCostPerOp } from "./rules/maxCostPerOp";
import { maxGasPrice } from "./rules/maxGasPrice";
import { senderLists } from "./rules/senderLists";
import { type LimitRefused, spendingLimitRule } from "./rules/spendingLimits";
import { timeWindow } from "./rules/timeWindow";
import { walletDeployment } from "./rules/walletDeployment";
import { webhookRule } from "./rules/webhooks";

/**
 * The rules that read only memory, in the order of docs/sponsorship-rpc.md, 'Sponsorship rules' (a USD cost cap also
 * reads the native token price, which a feed refreshes at most every few seconds: src/chain/nativeUsdPrice.ts; the
 * wallet-deployment rule reads the sender's code, once and only for an operation that names a factory or an EIP-7702
 * authorization: src/sponsorship/senderDeployment.ts). Rules
 * that cost a database read (spending limits), an RPC read (the deposit) or a call out (webhooks) come after them, so
 * a cheap refusal stops the evaluation first. pm_getPaymasterStubData runs them too, before the user signs
 * (src/sponsorship/eligibility.ts), over the operation at its cheapest: a rule here must hold nothing, and a refusal
 * of it must hold for every completion of the operation's gas.
 */
export const CHEAP_RULES: readonly Rule[] = [
  fundingAndRules,
  walletDeployment,
  contractWhitelist,
  maxCostPerOp,
  maxGasPrice,
  timeWindow,
  senderLists,
];

/** What the rules past the cheap ones work with: the limits' ledger, the deposits, the webhooks' settings. */
export interface RuleListDeps {
  ledger: LimitLedger;
  /** Told of each spending-limit refusal (the limit alert). */
  limitRefused?: (refusal: LimitRefused) => void;
  /** Without `inFlight`, one tally is made for both lists: the stub's read sees what sponsorships being signed hold. */
  deposits: DepositRuleDeps;
  webhooks: WebhookSettings | undefined;
  /** Where this service listens: never called as a webhook. */
  selfAddresses: () => readonly ListenAddress[];
  /** The service's clock (ms): the webhook calls' signatures are timestamped by it. */
  now: () => number;
  metrics?: Metrics;
}

/**
 * The rules of a sponsorship, in their order: memory-only rules first, then the spending limits (a read of the ledger;
 * they refuse more often than the deposit and need no RPC), then the deposit (a balance read cached for 2 s and one
 * batched query; before the webhooks, which each cost a call out), then the dApp's webhooks. And the rules of the
 * stub's eligibility check: what spends nothing, its deposit read included.
 */
export function sponsorshipRules(deps: RuleListDeps): { rules: readonly Rule[]; stubRules: readonly Rule[] } {
  const deposits = { ...deps.deposits, inFlight: deps.deposits.inFlight ?? new InFlightCharges() };
  return {
    rules: [
      ...CHEAP_RULES,
      spendingLimitRule(deps.ledger, deps.limitRefused),
      depositRule(deposits),
      webhookRule(deps.webhooks, deps.selfAddresses, deps.now, deps.metrics),
    ],
    stubRules: [...CHEAP_RULES, depositReadRule(deposits)],
  };
}
