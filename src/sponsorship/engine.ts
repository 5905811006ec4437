// The sponsorship engine: one operation, one EntryPoint version (src/bindings/entryPoints/entryPointVersion.ts), one
// of our paymasters (src/bindings/paymasters/paymasterKind.ts). The kind's rules decide, the paymaster's hash is
// the version's prefix and the kind's terms, and the answer is recorded before it is given out (decideSignRecord.ts).
// Every RPC path signs through here; a new version or kind is an implementation of its interface, nothing more.
import type { Address, Hex } from "viem";
import { keccakOfWords } from "../abi/abiWords";
import { PAYMASTER_SIGNATURE_PLACEHOLDER } from "../bindings/entryPoints/entryPointV09";
import type { EntryPointVersion } from "../bindings/entryPoints/entryPointVersion";
import type { PaymasterKind, SigningWindow } from "../bindings/paymasters/paymasterKind";
import { accountCodeOf } from "../chain/accountCode";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { Signer } from "../signer/signer";
import type { SignatureCommitments } from "../storage/signatureCommitments";
import type { SponsorshipLog } from "../storage/sponsorships";
import { planBlockWindow, requireWindowUnit } from "./blockWindow";
import type { SmartAccountInfo } from "./callData";
import { decideSignRecord } from "./decideSignRecord";
import { checkEligibility, type Eligibility } from "./eligibility";
import type { SponsoredUserOperation } from "./partialUserOperationV07";
import type { Rule } from "./rule";
import { SenderDeployment } from "./senderDeployment";
import type { SponsorshipSetup } from "./setup";

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
  /** EntryPoint v0.9 parallel signing: the signatures kept between commit and finalize (src/actions/parallelSigning.ts). */
  commitments?: SignatureCommitments;
  /** The service's clock (ms), the context's: every decision, window and quota of a sponsorship reads it. */
  now: () => number;
  /**
   * Why our paymaster at an address must not sign on a chain: a check of the contract on chain failed
   * (src/chain/contractWatch.ts). Asked before any rule, so nothing is reserved or called for an operation the bundler
   * would refuse. Absent: the contracts are not checked.
   */
  contractRefusal?: (chainId: number, paymaster: Address) => string | undefined;
  /**
   * Whether the sender has an up-front token paymaster operation with a permit of `token` signed and outstanding
   * (src/storage/outstandingPermits.ts): a second permit is not signed meanwhile. Absent: not checked.
   */
  outstandingPermit?: (chainId: number, sender: Address, token: string, nowSeconds: number) => Promise<boolean>;
}

/** An operation with every gas field and fee the signature covers. */
type Signable = SponsoredUserOperation & {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
};

export interface SponsorshipRequest<Op extends Signable, Terms extends SigningWindow> {
  setup: SponsorshipSetup;
  chain: SponsoringChain;
  version: EntryPointVersion<Op>;
  entryPoint: Address;
  kind: PaymasterKind<Terms>;
  /** Our contract of this kind for the EntryPoint; undefined when the chain has none (recorded as refused). */
  paymaster: Address | undefined;
  userOp: Op;
  expirySeconds: number;
  smartAccount?: SmartAccountInfo;
  webhookData?: Record<string, unknown>;
  /** The L1 data fee's part of preVerificationGas where the service estimated the gas: the record keeps it. */
  l1DataGas?: bigint;
  /**
   * Parallel signing (a version that `signsInParallel`, v0.9): the signature goes apart from paymasterData, over the
   * EntryPoint's user operation hash of the operation with a placeholder paymasterSignature, which the hash leaves out.
   */
  parallel?: boolean;
}

export type SponsorshipOutcome =
  | {
      sponsored: true;
      paymaster: Address;
      paymasterData: Hex;
      /** Parallel signing only: the signature to place after paymasterData, and the user operation hash it signs. */
      parallel?: ParallelSignature;
    }
  | { sponsored: false; reason: string; refusedBy?: string };

/** Decides, signs what the rules allow and records the answer (its reservations with it) before returning it. */
export async function sponsorOperation<Op extends Signable, Terms extends SigningWindow>(
  deps: SponsorDeps,
  request: SponsorshipRequest<Op, Terms>,
): Promise<SponsorshipOutcome> {
  const { setup, chain, version, kind, userOp, paymaster } = request;
  const encodeTermsAlone = kind.encodeTermsAlone;
  if (request.parallel && !(version.signsInParallel && encodeTermsAlone)) {
    throw new Error(
      `EntryPoint v${version.name} or this paymaster kind reads no paymaster signature apart from paymasterData`,
    );
  }
  const record = {
    paymasterId: setup.paymasterId,
    chainId: chain.chainId,
    sender: userOp.sender,
    nonce: userOp.nonce,
    callGasLimit: userOp.callGasLimit,
    verificationGasLimit: userOp.verificationGasLimit,
    preVerificationGas: userOp.preVerificationGas,
    maxFeePerGas: userOp.maxFeePerGas,
    maxPriorityFeePerGas: userOp.maxPriorityFeePerGas,
    ...(kind.holdsDeposit && setup.fundingAddress ? { fundingAddress: setup.fundingAddress } : {}),
    ...(paymaster ? { paymasterAddress: paymaster } : {}),
    entryPoint: request.entryPoint,
    mode: kind.mode,
    ...(request.l1DataGas === undefined ? {} : { l1DataGas: request.l1DataGas }),
  };
  const checked = paymaster ? failedCheck(deps, chain, paymaster) : noPaymaster(chain, kind.contractName);
  // A window in blocks where the paymaster asks for one (and the version and kind sign it); in seconds otherwise.
  const plan = checked
    ? undefined
    : await planBlockWindow(setup, chain, { version, kind, expirySeconds: request.expirySeconds }, deps.now());
  const unavailable = checked ?? (plan && "refusal" in plan ? plan.refusal : undefined);
  const inBlocks = plan && "window" in plan ? plan : undefined;
  const outcome = await decideSignRecord<SignedPart>(
    deps,
    {
      ...request,
      // The ledger holds a window in blocks for the time its blocks are expected to take (blockWindow.ts).
      expirySeconds: inBlocks ? inBlocks.heldSeconds : request.expirySeconds,
      record,
      worstCaseWei: version.depositChargeWei(userOp),
      holdsDeposit: kind.holdsDeposit,
      rules: unavailable ? [] : kind.rules(deps.rules, userOp, version),
      ...(unavailable ? { unavailable } : {}),
      nowMs: deps.now(),
    },
    async (window) => {
      const at = paymaster as Address;
      const terms = kind.terms(setup, inBlocks ? inBlocks.window : window);
      requireWindowUnit(
        { validUntil: terms.validUntil, validAfter: terms.validAfter },
        inBlocks ? "blocks" : "seconds",
      );
      // What the record keeps: the window signed, or for one in blocks the time the ledger holds it.
      const held = inBlocks ? window : terms;
      if (request.parallel && encodeTermsAlone) {
        // The terms travel in paymasterData with no signature there; userOpHash binds them, the chain and the EntryPoint.
        const paymasterData = encodeTermsAlone(terms);
        const userOpHash = version.userOpHash(
          userOp,
          { paymaster: at, paymasterData, paymasterSignature: PAYMASTER_SIGNATURE_PLACEHOLDER },
          request.entryPoint,
          chain.chainId,
        );
        const paymasterSignature = await deps.signer.signHash(userOpHash);
        const parallel = { paymasterSignature, userOpHash, heldUntil: held.validUntil };
        return { payload: { paymasterData, parallel }, userOpHash, signed: held };
      }
      const prefix = version.paymasterHashPrefix(userOp, { chainId: chain.chainId, paymaster: at });
      const signature = await deps.signer.signHash(keccakOfWords(prefix + kind.hashedTerms(terms)));
      const paymasterData = kind.encodeData(terms, signature);
      const userOpHash = version.userOpHash(
        userOp,
        { paymaster: at, paymasterData },
        request.entryPoint,
        chain.chainId,
      );
      return { payload: { paymasterData }, userOpHash, signed: held };
    },
  );
  if (!outcome.sponsored) return outcome;
  return { sponsored: true, paymaster: paymaster as Address, ...outcome.payload };
}

/**
 * The engine's decision without a signature, for the ERC-7677 stub: what refuses before any rule (our paymaster
 * missing, or failing a check of the contract on chain), then the kind's stub rules (PaymasterKind.stubRules, none of
 * which holds anything) over the operation as the caller gives it, at its cheapest. Nothing is reserved, called out
 * or recorded: the final request decides again over the real figures.
 */
export async function checkOperation<Op extends SponsoredUserOperation, Terms extends SigningWindow>(
  deps: Pick<SponsorDeps, "contractRefusal" | "stubRules" | "now">,
  request: {
    setup: SponsorshipSetup;
    chain: SponsoringChain;
    version: EntryPointVersion<Op>;
    kind: PaymasterKind<Terms>;
    paymaster: Address | undefined;
    userOp: Op;
    expirySeconds: number;
    smartAccount?: SmartAccountInfo;
  },
): Promise<Eligibility> {
  const { chain, paymaster, kind, version, userOp } = request;
  const unavailable = paymaster ? failedCheck(deps, chain, paymaster) : noPaymaster(chain, kind.contractName);
  if (unavailable) return { eligible: false, ...unavailable, outcomes: [] };
  const nowMs = deps.now();
  return checkEligibility(
    {
      setup: request.setup,
      userOp,
      version,
      smartAccount: request.smartAccount,
      senderDeployment: new SenderDeployment(version.view(userOp), accountCodeOf(chain), nowMs),
      nowMs,
      validUntil: Math.floor(nowMs / 1000) + request.expirySeconds,
    },
    kind.stubRules(deps.stubRules, userOp, version),
  );
}

/** A paymaster signature made apart from paymasterData (parallel signing, v0.9). */
export interface ParallelSignature {
  paymasterSignature: Hex;
  /** The user operation hash it signs. */
  userOpHash: Hex;
  /** Until when the ledger holds it, unix seconds: its validUntil, or for a window in blocks the time they should take. */
  heldUntil: number;
}

/** What the signing step gives out: paymasterData, and with parallel signing the signature apart. */
interface SignedPart {
  paymasterData: Hex;
  parallel?: ParallelSignature;
}

/**
 * Why our paymaster at `paymaster` must not be used on the chain now, naming the check of the contract that failed;
 * undefined when every check concerning it holds. The ERC-7677 stub (src/actions/stub.ts) asks it too, so that it
 * refuses in the words the final request would.
 */
export function failedCheck(
  deps: Pick<SponsorDeps, "contractRefusal">,
  chain: Pick<SponsoringChain, "chainId">,
  paymaster: Address,
): { reason: string; refusedBy: string } | undefined {
  const reason = deps.contractRefusal?.(chain.chainId, paymaster);
  return reason ? { reason, refusedBy: "contractChecks" } : undefined;
}

// The refusal's name stays the one the decision metrics have always counted, whatever the kind.
const noPaymaster = (chain: SponsoringChain, contractName: string) => ({
  reason: `No ${contractName} is configured for chain ${chain.chainId} (${chain.name})`,
  refusedBy: "noVerifyingPaymaster",
});
