import { toHex } from "viem";
import { sponsorErc20 } from "../actions/sponsorErc20";
import { sponsorUserOperation } from "../actions/sponsorUserOperation";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { Erc20SponsorResult } from "../schemas/rpc/pm_sponsorUserOperation";
import type { SignableUserOperation } from "../sponsorship/sponsor";
import type { RpcMethod } from "./methodContext";
import { parseModeParams } from "./mode";
import { sponsoredResult } from "./sponsoredResult";
import { readUserOperation } from "./userOperationInput";

/**
 * `pm_sponsorUserOperation` (and `pm_getFeeQuoteOrData`, which answers SPONSORED mode the same way): a signed
 * paymasterAndData for a partial user operation. Params are read with their schemas (src/schemas/rpc/), the work is
 * the use case's (src/actions/sponsorUserOperation.ts, or sponsorErc20.ts in mode ERC20), and a refusal is answered as
 * the params' form asks (src/rpc/mode.ts): `0x` with the reason after a mode object, a -32003 error with the reason
 * after an EntryPoint address.
 */
export const pm_sponsorUserOperation: RpcMethod = async (params, ctx) => {
  const { userOp, signature } = readUserOperation(params[0]);
  const request = parseModeParams(params);
  const { mode } = request;
  ctx.decision.mode = mode.mode === "ERC20" ? "erc20" : "sponsored";
  if (mode.mode === "ERC20") {
    const signed = await sponsorErc20(ctx, { ...mode, userOp, signature });
    const result: Erc20SponsorResult = {
      mode: "ERC20",
      MODE: "ERC20",
      paymasterAndData: signed.paymasterAndData,
      preVerificationGas: signed.userOp.preVerificationGas.toString(),
      verificationGasLimit: Number(signed.userOp.verificationGasLimit),
      callGasLimit: Number(signed.userOp.callGasLimit),
      ...(signed.feesChosen ? chosenFees(signed.userOp) : {}),
    };
    return result;
  }
  if (request.form === "entryPoint" && request.entryPoint !== ctx.chain.entryPoint.toLowerCase()) {
    throw invalidParams(`params[1]: EntryPoint ${request.entryPoint} is not supported; use ${ctx.chain.entryPoint}`);
  }
  const outcome = await sponsorUserOperation(ctx, { ...mode, userOp, signature });
  if (outcome.answer.reason !== undefined && request.form === "entryPoint") {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${outcome.answer.reason}`);
  }
  const result = sponsoredResult(outcome.answer);
  // Fees the client did not send are ours, and the signature covers them: the client must put exactly these in.
  return outcome.feesChosen ? { ...result, ...chosenFees(outcome.userOp) } : result;
};

const chosenFees = (userOp: SignableUserOperation) => ({
  maxFeePerGas: toHex(userOp.maxFeePerGas),
  maxPriorityFeePerGas: toHex(userOp.maxPriorityFeePerGas),
});
