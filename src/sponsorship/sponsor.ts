import type { Hex } from "viem";
import { maxChargeWei } from "../chain/paymasterDeposit";
import type { Signer } from "../chain/signer";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { SponsorshipLog } from "../storage/sponsorships";
import type { SmartAccountInfo } from "./callData";
import { decideSignRecord } from "./decideSignRecord";
import { getUserOpHash } from "./entryPoints/userOpHash";
import type { PartialUserOperation } from "./partialUserOperation";
import { encodeVerifyingPaymasterAndData, getVerifyingPaymasterHash } from "./paymasters/paymasterAndData";
import type { Rule } from "./rule";
import type { SponsorshipSetup } from "./setup";

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

/**
 * Decides, and signs what the rules allow. The record of the answer is durable before the answer is returned, so every
 * signature the service gives out can be accounted for; the spending-limit reservations commit with that record.
 */
export async function sponsor(deps: SponsorDeps, request: SponsorRequest): Promise<SponsorAnswer> {
  const { setup, chain, userOp } = request;
  const gas = {
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
  };
  const record = {
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

  const paymaster = chain.verifyingPaymaster;
  if (!paymaster) {
    const reason = `No verifying paymaster is configured for chain ${chain.chainId} (${chain.name})`;
    await deps.log.record({ ...record, sponsored: false, reason, ruleOutcomes: [] });
    return { paymasterAndData: "0x", ...gas, reason, refusedBy: "noVerifyingPaymaster" };
  }
  const outcome = await decideSignRecord(
    deps,
    { ...request, record, worstCaseWei: maxChargeWei(userOp), nowMs: (deps.now ?? Date.now)() },
    async (terms) => {
      const hash = getVerifyingPaymasterHash(userOp, { ...terms, chainId: chain.chainId, paymaster });
      const signature = await deps.signer.signHash(hash);
      const paymasterAndData = encodeVerifyingPaymasterAndData({ ...terms, paymaster, signature });
      return {
        payload: paymasterAndData,
        userOpHash: getUserOpHash({ ...userOp, paymasterAndData }, chain.entryPoint, chain.chainId),
      };
    },
  );
  if (!outcome.sponsored) {
    return {
      paymasterAndData: "0x",
      ...gas,
      reason: outcome.reason,
      ...(outcome.refusedBy ? { refusedBy: outcome.refusedBy } : {}),
    };
  }
  return { paymasterAndData: outcome.payload, ...gas };
}
