import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { INVALID_PARAMS, RESOURCE_UNAVAILABLE, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { DecisionOutcome, Metrics } from "../metrics/metrics";
import type { SponsorshipSetup } from "../sponsorship/setup";
import type { DecisionNote } from "./methodContext";

/**
 * The rules' names (src/sponsorship/rules) and the refusals before them (a paused paymaster, a chain without a verifying
 * paymaster, a paymaster contract whose checks failed, a window in blocks without the chain's head): the only values
 * the reason label takes besides the error kinds.
 */
const RULE_REASONS = new Set([
  "fundingAndRules",
  "walletDeployment",
  "contractWhitelist",
  "maxCostPerOp",
  "timeWindow",
  "senderLists",
  "maxGasPrice",
  "rateLimit",
  "spendingLimits",
  "deposit",
  "webhooks",
  "noVerifyingPaymaster",
  "contractChecks",
  "blockWindow",
  "paused",
]);

export interface DecisionEnd {
  note: DecisionNote;
  chain: SponsoringChain;
  setup: SponsorshipSetup;
  startedMs: number;
  /** What the method threw, if it did. */
  error?: unknown;
}

/** outcome and a bounded reason: the refusing rule's name, or the kind of error, never the free-text reason. */
function classify(note: DecisionNote, error: unknown): { outcome: DecisionOutcome; reason: string } {
  if (note.refusedBy !== undefined) {
    return { outcome: "refused", reason: RULE_REASONS.has(note.refusedBy) ? note.refusedBy : "other" };
  }
  if (error === undefined) return { outcome: "sponsored", reason: "" };
  if (error instanceof RpcError) {
    if (error.code === RESOURCE_UNAVAILABLE) return { outcome: "error", reason: "gasEstimationUnavailable" };
    if (error.httpStatus >= 500) return { outcome: "error", reason: "internal" };
    // ERC20 mode refuses by error (no price, too small a balance, an operation that reverts): a client-side reason.
    if (error.code === INVALID_PARAMS) return { outcome: "refused", reason: "invalidParams" };
    if (error.code === SPONSORSHIP_REFUSED) return { outcome: "refused", reason: "refused" };
    return { outcome: "refused", reason: "other" };
  }
  return { outcome: "error", reason: "internal" };
}

/**
 * Counts and logs one sponsorship decision, once the method has answered: one line with the chain, the dApp's
 * paymaster name, the outcome, the reason and the time taken; never the apiKey, a token or the operation. Refusals and
 * errors at info; sponsorships, the bulk of the traffic, at debug (a line per request at info cost 30 to 60 µs of a
 * sponsorship's CPU; the metrics count them all).
 */
export function recordDecision(metrics: Metrics | undefined, log: FastifyBaseLogger, end: DecisionEnd): void {
  const mode = end.note.mode;
  if (mode === undefined) return;
  const seconds = (performance.now() - end.startedMs) / 1000;
  const { outcome, reason } = classify(end.note, end.error);
  const chainId = String(end.chain.chainId);
  metrics?.decisions.inc({ chain_id: chainId, mode, outcome, reason });
  metrics?.sponsorSeconds.observe({ chain_id: chainId, mode, outcome }, seconds);
  // A flood over quota would write a line per request: those are counted, and logged at debug like sponsorships.
  log[outcome === "sponsored" || reason === "rateLimit" ? "debug" : "info"](
    {
      chainId: end.chain.chainId,
      dapp: end.setup.name,
      mode,
      outcome,
      ...(reason ? { reason } : {}),
      ms: Math.round(seconds * 1000),
    },
    "sponsorship decision",
  );
}
