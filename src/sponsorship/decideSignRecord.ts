// The sponsorship's steps that every EntryPoint version and paymaster kind shares: the rules decide, what they allow is
// signed, and the answer is recorded (its limits reserved with it) before it is given out. What is signed and hashed
// is the engine's (engine.ts), from the version and the kind.

import type { Hex } from "viem";
import { accountCodeOf } from "../chain/accountCode";
import { CLOCK_SKEW_SECONDS } from "../chain/clockSkew";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SponsorshipLog, SponsorshipRecord } from "../storage/sponsorships";
import type { SmartAccountInfo } from "./callData";
import { decide } from "./decide";
import type { Rule, RuleInput } from "./rule";
import { SenderDeployment } from "./senderDeployment";
import type { SponsorshipSetup } from "./setup";
import { priceText, RequestPrice } from "./usdAmount";

/** A validity window, unix seconds. */
interface Window {
  validUntil: number;
  validAfter: number;
}

/**
 * The signing, for the window the rules passed: the paymaster data, the EntryPoint's hash of the operation carrying
 * it, and the window actually signed (a kind may keep a narrower one).
 */
export type SignFor<Payload> = (window: Window) => Promise<{ payload: Payload; userOpHash: Hex; signed: Window }>;

export interface DecideSignRecordRequest {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  userOp: RuleInput["userOp"];
  /** The operation's EntryPoint version, which the rules read it through. */
  version: RuleInput["version"];
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
  /** The record's fields that describe the operation and where it is paid, as the version fills them. */
  record: Omit<SponsorshipRecord, "sponsored" | "ruleOutcomes">;
  /** The most the operation can take from the deposit, wei. */
  worstCaseWei: bigint;
  /** Whether the signature is held against the dApp's deposit until settled (SPONSORED mode). */
  holdsDeposit: boolean;
  /** The rules that decide, in order. */
  rules: readonly Rule[];
  /** Why nothing can be signed at all (no paymaster of the kind on the chain): recorded as refused, no rule run. */
  unavailable?: { reason: string; refusedBy: string };
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
  deps: { log: SponsorshipLog },
  request: DecideSignRecordRequest,
  sign: SignFor<Payload>,
): Promise<DecideSignRecordOutcome<Payload>> {
  const { setup, chain, nowMs, unavailable } = request;
  if (unavailable) {
    await deps.log.record({ ...request.record, sponsored: false, reason: unavailable.reason, ruleOutcomes: [] });
    return { sponsored: false, ...unavailable };
  }
  const nowSeconds = Math.floor(nowMs / 1000);
  const validUntil = nowSeconds + request.expirySeconds;
  // Read once if a USD rule asks; the record keeps the price the rules used.
  const price = new RequestPrice(chain.nativeUsdPrice, chain.chainId, nowMs);
  const priceUsed = () => (price.used ? { nativeUsdPrice: priceText(price.used) } : {});
  const decision = await decide(
    {
      setup,
      userOp: request.userOp,
      version: request.version,
      smartAccount: request.smartAccount,
      webhookData: request.webhookData,
      nowMs,
      validUntil,
      nativeUsdPrice: price,
      senderDeployment: new SenderDeployment(request.version.view(request.userOp), accountCodeOf(chain), nowMs),
    },
    request.rules,
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
  let recorded = false;
  try {
    const { payload, userOpHash, signed } = await sign({ validUntil, validAfter: nowSeconds - CLOCK_SKEW_SECONDS });
    const outcome = await deps.log.record(
      {
        ...request.record,
        ...priceUsed(),
        sponsored: true,
        userOpHash,
        validUntil: signed.validUntil,
        validAfter: signed.validAfter,
        ruleOutcomes: decision.outcomes,
        worstCaseWei: request.worstCaseWei,
        // Held against the deposit where it is checked, i.e. where an RPC reads it and settlement gives it back.
        ...(request.holdsDeposit && chain.rpcUrl ? { maxCharge: request.worstCaseWei } : {}),
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
