// The sponsorship's steps that every EntryPoint version shares: the rules decide, what they allow is signed, and the
// answer is recorded (its limits reserved with it) before it is given out. The versions differ only in what they sign
// and hash (sponsor.ts for v0.6, sponsorV07.ts for v0.7 and v0.8).
import type { Hex } from "viem";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SponsorshipRecord } from "../storage/sponsorships";
import type { SmartAccountInfo } from "./callData";
import { decide } from "./decide";
import type { RuleInput } from "./rule";
import type { SponsorshipSetup } from "./setup";
import type { SponsorDeps } from "./sponsor";
import { priceText, RequestPrice } from "./usdAmount";

/** Clocks of our host and of the chain's block producers differ a little; an operation must not be born expired. */
export const CLOCK_SKEW_SECONDS = 60;

/** What the paymaster's signature commits to besides the operation. */
export interface SignedTerms {
  /** The funding wallet: the on-chain paymasterId whose deposit pays. */
  paymasterId: Hex;
  validUntil: number;
  validAfter: number;
}

/** One version's signing: its paymaster data for the terms, and the EntryPoint's hash of the operation carrying it. */
export type SignFor<Payload> = (terms: SignedTerms) => Promise<{ payload: Payload; userOpHash: Hex }>;

export interface DecideSignRecordRequest {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  userOp: RuleInput["userOp"];
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
  /** The record's fields that describe the operation and where it is paid, as the version fills them. */
  record: Omit<SponsorshipRecord, "sponsored" | "ruleOutcomes">;
  /** The most the operation can take from the deposit, wei. */
  worstCaseWei: bigint;
  nowMs: number;
}

export type DecideSignRecordOutcome<Payload> =
  | { sponsored: true; payload: Payload }
  | { sponsored: false; reason: string; refusedBy?: string };

/**
 * Decides; records a refusal, or signs what the rules allow and records it with its reservations. A signature whose
 * limits filled since the rules' pre-check is recorded as refused and dropped unseen.
 */
export async function decideSignRecord<Payload>(
  deps: SponsorDeps,
  request: DecideSignRecordRequest,
  sign: SignFor<Payload>,
): Promise<DecideSignRecordOutcome<Payload>> {
  const { setup, chain, nowMs } = request;
  const nowSeconds = Math.floor(nowMs / 1000);
  const validUntil = nowSeconds + request.expirySeconds;
  // Read once if a USD rule asks; the record keeps the price the rules used.
  const price = new RequestPrice(chain.nativeUsdPrice, chain.chainId, nowMs);
  const priceUsed = () => (price.used ? { nativeUsdPrice: priceText(price.used) } : {});
  const decision = await decide(
    {
      setup,
      userOp: request.userOp,
      smartAccount: request.smartAccount,
      webhookData: request.webhookData,
      nowMs,
      validUntil,
      nativeUsdPrice: price,
    },
    deps.rules,
  );
  if (!decision.sponsored) {
    const outcomes = decision.outcomes;
    await deps.log.record({
      ...request.record,
      ...priceUsed(),
      sponsored: false,
      reason: decision.reason,
      ruleOutcomes: outcomes,
    });
    return { sponsored: false, reason: decision.reason, refusedBy: outcomes.at(-1)?.rule };
  }
  // Rule 1 passed, so a funding wallet is linked: it is the paymasterId whose deposit pays on chain.
  const terms = { paymasterId: setup.fundingAddress as Hex, validUntil, validAfter: nowSeconds - CLOCK_SKEW_SECONDS };
  let recorded = false;
  try {
    const { payload, userOpHash } = await sign(terms);
    const outcome = await deps.log.record(
      {
        ...request.record,
        ...priceUsed(),
        sponsored: true,
        userOpHash,
        validUntil: terms.validUntil,
        validAfter: terms.validAfter,
        ruleOutcomes: decision.outcomes,
        worstCaseWei: request.worstCaseWei,
        // Held against the deposit where it is checked, i.e. where an RPC reads it and settlement gives it back.
        ...(chain.rpcUrl ? { maxCharge: request.worstCaseWei } : {}),
      },
      decision.claim,
    );
    if (!outcome.ok) return { sponsored: false, reason: outcome.reason };
    recorded = true;
    return { sponsored: true, payload };
  } finally {
    decision.afterRecord(recorded);
  }
}
