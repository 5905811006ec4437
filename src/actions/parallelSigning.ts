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
import { ENTRY_POINT_VERSIONS } from "../bindings/entryPoints/versions";
import { verifyingPaymaster } from "../bindings/paymasters/verifying";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PartialUserOperationV07 } from "../sponsorship/partialUserOperationV07";
import type { ActionContext } from "./context";
import { asGivenV07 } from "./operationGasV07";
import { type SponsorAnswerV07, signV07 } from "./signOperation";
import type { EntryPointV07, PaymasterFieldsV07, SponsoredKind, TokenKind } from "./stepRequest";

/** The request of either step: a later EntryPoint's operation and the paymaster kind its context asks for. */
export interface ParallelRequest {
  target: EntryPointV07;
  userOp: PartialUserOperationV07;
  mode: SponsoredKind | TokenKind;
}

export type ParallelAnswer = PaymasterFieldsV07 & { paymasterSignature: Hex };

/** Parallel signing needs a version whose EntryPoint reads the signature apart, and our verifying paymaster. */
function requireParallel(request: ParallelRequest): asserts request is ParallelRequest & { mode: SponsoredKind } {
  if (!ENTRY_POINT_VERSIONS[request.target.version].signsInParallel) {
    throw invalidParams(
      `params[3].signingPhase: EntryPoint v${request.target.version} has no paymaster signature apart from ` +
        "paymasterData; parallel signing needs EntryPoint v0.9 (leave signingPhase out to sign sequentially)",
    );
  }
  if (request.mode.mode !== "SPONSORED") {
    throw invalidParams(
      "params[3].signingPhase: parallel signing is served for SPONSORED mode; ERC20 mode (token) signs sequentially",
    );
  }
}

export async function commitSignature(ctx: ActionContext, request: ParallelRequest): Promise<SponsorAnswerV07> {
  requireParallel(request);
  const userOp = asGivenV07(request.userOp);
  const answer = await signV07(ctx, request.target, verifyingPaymaster, userOp, { ...request.mode, parallel: true });
  if (answer.reason !== undefined || !answer.parallel) return answer;
  const commitments = requireCommitments(ctx);
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  await commitments.save({
    chainId: ctx.chain.chainId,
    entryPoint: request.target.entryPoint,
    sender: userOp.sender,
    nonce: userOp.nonce,
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
  request: ParallelRequest,
  fields: PaymasterFieldsV07,
): Promise<ParallelAnswer> {
  requireParallel(request);
  const { target } = request;
  if (!isAddressEqual(fields.paymaster, target.paymaster)) {
    throw invalidParams(`params[0].paymaster ${fields.paymaster} is not our paymaster ${target.paymaster}`);
  }
  const userOp = { ...asGivenV07(request.userOp), ...gasOf(fields) };
  const version = ENTRY_POINT_VERSIONS[target.version];
  const userOpHash = version.userOpHash(
    userOp,
    {
      paymaster: target.paymaster,
      paymasterData: fields.paymasterData,
      paymasterSignature: COMMIT_PAYMASTER_SIGNATURE,
    },
    target.entryPoint,
    ctx.chain.chainId,
  );
  const nowSeconds = Math.floor(ctx.deps.now() / 1000);
  const committed = await requireCommitments(ctx).find(
    {
      chainId: ctx.chain.chainId,
      entryPoint: target.entryPoint,
      sender: userOp.sender,
      nonce: userOp.nonce,
      paymasterId: ctx.setup.paymasterId,
    },
    nowSeconds,
  );
  if (!committed) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: no live commitment for sender ${userOp.sender} nonce ${userOp.nonce} ` +
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

const gasOf = (fields: PaymasterFieldsV07) => ({
  paymasterVerificationGasLimit: fields.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: fields.paymasterPostOpGasLimit,
});

function requireCommitments(ctx: ActionContext) {
  const { commitments } = ctx.deps;
  if (!commitments) throw new Error("parallel signing needs the signature commitments' storage");
  return commitments;
}
