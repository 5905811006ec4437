import { toHex } from "viem";
import { erc20Kind } from "../actions/kinds/permitTokenKind";
import { sponsoredKind } from "../actions/kinds/sponsoredKind";
import { tokenKind } from "../actions/kinds/tokenKind";
import { packedOperation } from "../actions/operations/packedOperation";
import { unpackedOperation } from "../actions/operations/unpackedOperation";
import { sponsor } from "../actions/sponsor";
import type { PaymasterFieldsV07, SignedGas, StepAnswer } from "../actions/stepRequest";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { Erc20SponsorResult, SponsoredResultV07 } from "../schemas/rpc/pm_sponsorUserOperation";
import { type LaterEntryPoint, laterEntryPoint, unsupportedEntryPoint, v06Target } from "./entryPointChoice";
import type { MethodContext, RpcMethod } from "./methodContext";
import { parseModeParams, parseSponsoredContext } from "./mode";
import { type SponsorParams, sponsorParamsForm } from "./paramsForm";
import { paymasterAndDataOf, paymasterFieldsResult } from "./paymasterPartResult";
import { refuseSigningPhase } from "./signingPhase";
import { sponsoredResult } from "./sponsoredResult";
import { parseTokenContext } from "./tokenContext";
import { readUserOperation } from "./userOperationInput";
import { readUserOperationV07 } from "./userOperationV07Input";

/**
 * `pm_sponsorUserOperation` (and `pm_getFeeQuoteOrData`, which answers SPONSORED mode the same way): a signed
 * paymasterAndData for a partial user operation. The params' form is sorted out by its schema first
 * (src/rpc/paramsForm.ts), each position then read by the schema the form and the EntryPoint pick; the work is
 * the sponsor step's (src/actions/sponsor.ts), and a refusal is answered as
 * the params' form asks (src/rpc/mode.ts): `0x` with the reason after a mode object, a -32003 error with the reason
 * after an EntryPoint address. A v0.7 or v0.8 EntryPoint address makes it a v0.7 request (the token paymaster's
 * when the context names a fee token).
 */
export const pm_sponsorUserOperation: RpcMethod = async (params, ctx) => sponsorByForm(sponsorParamsForm(params), ctx);

/** The sponsorship for params already sorted by form (pm_getFeeQuoteOrData's SPONSORED requests come here too). */
export async function sponsorByForm(
  form: SponsorParams,
  ctx: MethodContext,
): Promise<SponsoredResultV07 | Erc20SponsorResult | ReturnType<typeof sponsoredResult>> {
  if (form.form === "entryPoint") {
    const later = laterEntryPoint(ctx.chain, form.entryPoint, form.asksForToken ? "token" : "verifying");
    if (later) return sponsorV07Request(form, ctx, later);
  }
  const { userOp, signature } = readUserOperation(form.userOp);
  refuseTokenAfterV06EntryPoint(form);
  const request = parseModeParams(form);
  if (form.form === "entryPoint") refuseSigningPhase(form.context, "params[2]");
  const { mode } = request;
  ctx.decision.mode = mode.mode === "ERC20" ? "erc20" : "sponsored";
  if (mode.mode === "ERC20") {
    const signed = await sponsor(ctx, {
      operation: unpackedOperation(v06Target(ctx.chain, true), userOp, signature),
      kind: tokenKind({
        expirySeconds: mode.expirySeconds,
        calculateGasLimits: mode.calculateGasLimits,
        feeToken: mode.tokenInfo.feeTokenAddress,
        feeTokenLabel: "params[1].tokenInfo.feeTokenAddress",
      }),
    });
    const result: Erc20SponsorResult = {
      mode: "ERC20",
      MODE: "ERC20",
      paymasterAndData: paymasterAndDataOf(signed.answer.part),
      preVerificationGas: signed.userOp.preVerificationGas.toString(),
      verificationGasLimit: Number(signed.userOp.verificationGasLimit),
      callGasLimit: Number(signed.userOp.callGasLimit),
      ...(signed.feesChosen ? chosenFees(signed.userOp) : {}),
    };
    return result;
  }
  if (request.form === "entryPoint" && request.entryPoint !== ctx.chain.entryPoint.toLowerCase()) {
    throw unsupportedEntryPoint(ctx.chain, request.entryPoint);
  }
  const outcome = await sponsor(ctx, {
    operation: unpackedOperation(v06Target(ctx.chain, false), userOp, signature),
    kind: sponsoredKind(mode),
  });
  if (outcome.answer.reason !== undefined && request.form === "entryPoint") {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${outcome.answer.reason}`);
  }
  const result = sponsoredResult(outcome.answer);
  // Fees the client did not send are ours, and the signature covers them: the client must put exactly these in.
  return outcome.feesChosen ? { ...result, ...chosenFees(outcome.userOp) } : result;
}

/**
 * `[userOp, entryPoint, context?]` with a v0.7 or v0.8 EntryPoint: Pimlico's result, our paymaster fields and the
 * account's gas they cover, all hex; a refusal is -32003 with the reason.
 */
async function sponsorV07Request(
  form: Extract<SponsorParams, { form: "entryPoint" }>,
  ctx: MethodContext,
  target: LaterEntryPoint,
): Promise<SponsoredResultV07> {
  const { userOp, signature } = readUserOperationV07(form.userOp, target.version);
  if (form.asksForToken) {
    const tokenContext = parseTokenContext(form.context, "params[2]");
    refuseSigningPhase(form.context, "params[2]");
    ctx.decision.mode = "erc20";
    const upFront = {
      paymaster: ctx.chain.entryPoints.get(target.version)?.permitTokenPaymaster,
      version: target.version,
      userOp,
      forStub: false,
    };
    const signed = await sponsor(ctx, {
      operation: packedOperation(target, userOp, signature),
      kind: erc20Kind(tokenContext, upFront),
    });
    return gasResult(signed.answer);
  }
  const mode = parseSponsoredContext(form.context, "params[2]", "unreachable: mode ERC20 is read as ERC20 above");
  refuseSigningPhase(form.context, "params[2]");
  ctx.decision.mode = "sponsored";
  const { answer } = await sponsor(ctx, {
    operation: packedOperation(target, userOp, signature),
    kind: sponsoredKind(mode),
  });
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  return gasResult(answer);
}

function gasResult(answer: StepAnswer): SponsoredResultV07 {
  return {
    ...paymasterFieldsResult(answer.part as PaymasterFieldsV07),
    callGasLimit: toHex(answer.callGasLimit),
    verificationGasLimit: toHex(answer.verificationGasLimit),
    preVerificationGas: toHex(answer.preVerificationGas),
  };
}

/**
 * A fee token in the context after v0.6's EntryPoint asks for ERC20 mode, which this form does not serve for v0.6:
 * refused rather than silently sponsored in SPONSORED mode.
 */
function refuseTokenAfterV06EntryPoint(form: SponsorParams): void {
  if (form.form !== "entryPoint" || !form.namesToken) return;
  throw invalidParams(
    "params[2].token: ERC20 mode for EntryPoint v0.6 operations is served by the mode object form " +
      '[userOp, {mode: "ERC20", tokenInfo: {feeTokenAddress}}] and by the ERC-7677 methods with the context { token }',
  );
}

const chosenFees = (userOp: SignedGas) => ({
  maxFeePerGas: toHex(userOp.maxFeePerGas),
  maxPriorityFeePerGas: toHex(userOp.maxPriorityFeePerGas),
});
