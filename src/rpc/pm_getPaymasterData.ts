import { COMMIT_PAYMASTER_SIGNATURE, commitSignature, finalizeSignature } from "../actions/parallelSigning";
import { paymasterData } from "../actions/paymasterData";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterDataResult, PaymasterDataResultV07 } from "../schemas/rpc/pm_getPaymasterData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterFieldsResult, paymasterPartResult } from "./paymasterPartResult";
import { readCommittedFields, readSigningPhase } from "./signingPhase";

/**
 * ERC-7677 `pm_getPaymasterData` (src/actions/paymasterData.ts): the signed paymasterAndData (v0.6) or paymaster
 * fields (v0.7 on), the token paymaster's when the context names a fee token, or an error with the reason (this
 * method has no `0x` result for a refusal). With `signingPhase` in the context, EntryPoint v0.9's parallel signing
 * (src/actions/parallelSigning.ts): "commit" answers the fields and a placeholder paymasterSignature, "finalize" the
 * real one.
 */
export const pm_getPaymasterData: RpcMethod = async (params, ctx) => {
  const request = parseErc7677Params(params, ctx);
  ctx.decision.mode = request.kind.decisionMode;
  // A signing phase outside v0.9 was refused as the params were read (refuseSigningPhaseOutsideV09).
  const phase = readSigningPhase(params[3]);
  if (phase === "finalize") {
    const answer = await finalizeSignature(ctx, request, readCommittedFields(params[0]));
    return { ...paymasterFieldsResult(answer), paymasterSignature: answer.paymasterSignature };
  }
  if (phase === "commit") {
    const answer = await commitSignature(ctx, request);
    if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
    return { ...paymasterFieldsResult(answer.part), paymasterSignature: COMMIT_PAYMASTER_SIGNATURE };
  }
  const sponsorship = await paymasterData(ctx, request);
  if (sponsorship.answer.reason !== undefined) {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${sponsorship.answer.reason}`);
  }
  const result: PaymasterDataResult | PaymasterDataResultV07 = paymasterPartResult(sponsorship.answer.part);
  return result;
};
