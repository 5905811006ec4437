// EntryPoint v0.9 parallel signing, the two steps of pm_getPaymasterData with `signingPhase` in its context.
// "commit": the engine decides, reserves and signs the EntryPoint's user operation hash of the operation with our
// paymaster fields and a placeholder paymasterSignature (which that hash leaves out), the signature is kept by sender,
// nonce and paymaster, and the answer is the paymaster fields plus the placeholder, so that the account signs a hash with the
// magic in it. "finalize": the same operation, now signed by the account, gets the kept signature, provided its hash
// is the one committed; an operation changed in between is refused with the reason. A commitment is as long-lived as
// its signature's validUntil (for a window in blocks, the time the ledger holds it): never finalized, it dies then, and
// settlement releases its reservation then, as for any signature never mined (it cannot be: the signature was never
// given out).
import { type Hex, isAddressEqual } from "viem";
import { PAYMASTER_SIGNATURE_PLACEHOLDER } from "../bindings/entryPoints/entryPointV09";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { ActionContext } from "./context";
import type { AnyPaymasterKind, PaymasterFieldsV07, StepAnswer, StepRequest } from "./stepRequest";

export type ParallelAnswer = PaymasterFieldsV07 & { paymasterSignature: Hex };

/**
 * Parallel signing needs a version whose EntryPoint reads the paymaster signature apart, and a kind whose contract
 * takes it there (PaymasterKind.encodeTermsAlone).
 */
async function parallelKind(ctx: ActionContext, request: StepRequest): Promise<AnyPaymasterKind> {
  const { version } = request.operation;
  if (!version.signsInParallel) {
    throw invalidParams(
      `params[3].signingPhase: EntryPoint v${version.name} has no paymaster signature apart from ` +
        "paymasterData; parallel signing needs EntryPoint v0.9 (leave signingPhase out to sign sequentially)",
    );
  }
  const kind = await request.kind.choose(ctx);
  if (!kind.encodeTermsAlone) {
    throw invalidParams(
      `params[3].signingPhase: parallel signing is not served for ${kind.mode} mode: the ${kind.contractName} ` +
        "signs sequentially",
    );
  }
  return kind;
}

export async function commitSignature(
  ctx: ActionContext,
  request: StepRequest,
): Promise<StepAnswer & { part: PaymasterFieldsV07 }> {
  const kind = await parallelKind(ctx, request);
  const { operation, kind: choice } = request;
  const filled = await operation.fill(ctx, kind, { estimate: false, purpose: "sign", choice });
  const answer = (await filled.sign(ctx, { ...choice, parallel: true })) as StepAnswer & { part: PaymasterFieldsV07 };
  if (answer.reason !== undefined || !answer.parallel) return answer;
  const commitments = requireCommitments(ctx);
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  await commitments.save({
    chainId: ctx.chain.chainId,
    entryPoint: operation.target.entryPoint,
    sender: operation.sender,
    nonce: filled.userOp.nonce,
    paymasterId: ctx.setup.paymasterId,
    userOpHash: answer.parallel.userOpHash,
    paymasterSignature: answer.parallel.paymasterSignature,
    validUntil: answer.parallel.heldUntil,
  });
  // Dead commitments are few and small; they go when a new one comes, with no timer of their own.
  await commitments.dropExpired(nowSeconds);
  return answer;
}

/** The placeholder the account's operation carries until finalize: what commit answers as paymasterSignature. */
export const COMMIT_PAYMASTER_SIGNATURE = PAYMASTER_SIGNATURE_PLACEHOLDER;

export async function finalizeSignature(
  ctx: ActionContext,
  request: StepRequest,
  fields: PaymasterFieldsV07,
): Promise<ParallelAnswer> {
  const kind = await parallelKind(ctx, request);
  const { operation, kind: choice } = request;
  const paymaster = kind.paymaster ?? operation.target.paymaster;
  if (!paymaster || !isAddressEqual(fields.paymaster, paymaster)) {
    throw invalidParams(`params[0].paymaster ${fields.paymaster} is not our paymaster ${paymaster}`);
  }
  const filled = await operation.fill(ctx, kind, { estimate: false, purpose: "sign", choice });
  if (!filled.userOpHashWith) throw new Error(`EntryPoint v${operation.version.name} hashes no signature apart`);
  const userOpHash = filled.userOpHashWith(ctx, { ...fields, paymasterSignature: COMMIT_PAYMASTER_SIGNATURE });
  const { sender, nonce } = filled.userOp;
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  const committed = await requireCommitments(ctx).find(
    {
      chainId: ctx.chain.chainId,
      entryPoint: operation.target.entryPoint,
      sender,
      nonce,
      paymasterId: ctx.setup.paymasterId,
    },
    nowSeconds,
  );
  if (!committed) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: no live commitment for sender ${sender} nonce ${nonce} ` +
        '(call with signingPhase "commit" first; a commitment lasts until its signature\'s validUntil)',
    );
  }
  if (committed.userOpHash !== userOpHash) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: the operation changed since commit (its user operation hash is ${userOpHash}, the committed ` +
        `one ${committed.userOpHash}): every field but the two signatures must be as committed; commit again`,
    );
  }
  return { ...fields, paymasterSignature: committed.paymasterSignature };
}

function requireCommitments(ctx: ActionContext) {
  const { commitments } = ctx.deps;
  if (!commitments) throw new Error("parallel signing needs the signature commitments' storage");
  return commitments;
}
