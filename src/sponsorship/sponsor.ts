import type { Hex } from "viem";
import { encodeVerifyingPaymasterAndData, getVerifyingPaymasterHash } from "../chain/paymasterAndData";
import { maxChargeWei } from "../chain/paymasterDeposit";
import type { Signer } from "../chain/signer";
import type { SponsoringChain } from "../chain/sponsoringChains";
import { getUserOpHash } from "../chain/userOpHash";
import type { SponsorshipLog } from "../storage/sponsorships";
import type { SmartAccountInfo } from "./callData";
import { decide } from "./decide";
import type { PartialUserOperation } from "./partialUserOperation";
import type { Rule, RuleOutcome } from "./rule";
import type { SponsorshipSetup } from "./setup";
import { priceText, RequestPrice } from "./usdAmount";

/** The operation with every field the paymaster signature covers. */
export type SignableUserOperation = Required<PartialUserOperation>;

export interface SponsorRequest {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  userOp: SignableUserOperation;
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
}

export interface SponsorAnswer {
  /** `0x` when refused. */
  paymasterAndData: Hex;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  reason?: string;
  /** When refused: the rule that refused (a fixed name, for metrics and logs), or "noVerifyingPaymaster". */
  refusedBy?: string;
}

export interface SponsorDeps {
  signer: Signer;
  log: SponsorshipLog;
  /** The rules of SPONSORED mode, in evaluation order. */
  rules: readonly Rule[];
  /**
   * Those of `rules` that spend nothing, in the same order, for pm_getPaymasterStubData (src/sponsorship/eligibility.ts):
   * the memory-only rules and the deposit read without a hold; never the spending limits' claim or a webhook call.
   */
  stubRules: readonly Rule[];
  now?: () => number;
}

/** Clocks of our host and of the chain's block producers differ a little; an operation must not be born expired. */
export const CLOCK_SKEW_SECONDS = 60;

/**
 * Decides, and signs what the rules allow. The record of the answer is durable before the answer is returned, so every
 * signature the service gives out can be accounted for; the spending-limit reservations commit with that record.
 */
export async function sponsor(deps: SponsorDeps, request: SponsorRequest): Promise<SponsorAnswer> {
  const { setup, chain, userOp } = request;
  const nowMs = (deps.now ?? Date.now)();
  const gas = {
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
  };
  const base = {
    paymasterId: setup.paymasterId,
    chainId: chain.chainId,
    sender: userOp.sender,
    nonce: userOp.nonce,
    ...gas,
    maxFeePerGas: userOp.maxFeePerGas,
    maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
    ...(setup.fundingAddress ? { fundingAddress: setup.fundingAddress } : {}),
    ...(chain.verifyingPaymaster ? { paymasterAddress: chain.verifyingPaymaster } : {}),
    entryPoint: chain.entryPoint,
    mode: "SPONSORED" as const,
  };

  // Read once if a USD rule asks; the record keeps the price the rules used.
  const price = new RequestPrice(chain.nativeUsdPrice, chain.chainId, nowMs);
  const priceUsed = () => (price.used ? { nativeUsdPrice: priceText(price.used) } : {});
  const refusal = async (reason: string, outcomes: RuleOutcome[]): Promise<SponsorAnswer> => {
    await deps.log.record({ ...base, ...priceUsed(), sponsored: false, reason, ruleOutcomes: outcomes });
    return { paymasterAndData: "0x", ...gas, reason, refusedBy: outcomes.at(-1)?.rule ?? "noVerifyingPaymaster" };
  };

  const paymaster = chain.verifyingPaymaster;
  if (!paymaster) {
    return refusal(`No verifying paymaster is configured for chain ${chain.chainId} (${chain.name})`, []);
  }
  const nowSeconds = Math.floor(nowMs / 1000);
  const validUntil = nowSeconds + request.expirySeconds;
  const decision = await decide(
    {
      setup,
      userOp,
      smartAccount: request.smartAccount,
      webhookData: request.webhookData,
      nowMs,
      validUntil,
      nativeUsdPrice: price,
    },
    deps.rules,
  );
  if (!decision.sponsored) return refusal(decision.reason, decision.outcomes);
  // Rule 1 passed, so a funding wallet is linked: it is the paymasterId whose deposit pays on chain.
  const terms = { paymasterId: setup.fundingAddress as Hex, validUntil, validAfter: nowSeconds - CLOCK_SKEW_SECONDS };
  let recorded = false;
  try {
    const hash = getVerifyingPaymasterHash(userOp, { ...terms, chainId: chain.chainId, paymaster });
    const signature = await deps.signer.signHash(hash);
    const paymasterAndData = encodeVerifyingPaymasterAndData({ ...terms, paymaster, signature });
    const userOpHash = getUserOpHash({ ...userOp, paymasterAndData }, chain.entryPoint, chain.chainId);
    const outcome = await deps.log.record(
      {
        ...base,
        ...priceUsed(),
        sponsored: true,
        userOpHash,
        validUntil: terms.validUntil,
        validAfter: terms.validAfter,
        ruleOutcomes: decision.outcomes,
        worstCaseWei: maxChargeWei(userOp),
        // Held against the deposit where it is checked, i.e. where an RPC reads it and settlement gives it back.
        ...(chain.rpcUrl ? { maxCharge: maxChargeWei(userOp) } : {}),
      },
      decision.claim,
    );
    // Its limits filled since the rules' pre-check: recorded as refused, and the signature is dropped unseen.
    if (!outcome.ok) return { paymasterAndData: "0x", ...gas, reason: outcome.reason };
    recorded = true;
    return { paymasterAndData, ...gas };
  } finally {
    decision.afterRecord(recorded);
  }
}
