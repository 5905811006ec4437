import { toHex } from "viem";
import type { SponsorAnswerV07 } from "../actions/signOperation";
import { sponsor } from "../actions/sponsor";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { Erc20SponsorResult, SponsoredResultV07 } from "../schemas/rpc/pm_sponsorUserOperation";
import type { SignableUserOperation } from "../sponsorship/entryPoints/v06";
import { laterEntryPoint, unsupportedEntryPoint } from "./entryPointChoice";
import type { MethodContext, RpcMethod } from "./methodContext";
import { parseModeParams, parseSponsoredContext } from "./mode";
import { paymasterFieldsResult } from "./paymasterFieldsV07";
import { sponsoredResult } from "./sponsoredResult";
import { asksForToken, namesToken, parseTokenContext } from "./tokenContext";
import { readUserOperation } from "./userOperationInput";
import { hasV07Fields, readUserOperationV07 } from "./userOperationV07Input";

/**
 * `pm_sponsorUserOperation` (and `pm_getFeeQuoteOrData`, which answers SPONSORED mode the same way): a signed
 * paymasterAndData for a partial user operation. Params are read with their schemas (src/schemas/rpc/), the work is
 * the sponsor step's (src/actions/sponsor.ts), and a refusal is answered as
 * the params' form asks (src/rpc/mode.ts): `0x` with the reason after a mode object, a -32003 error with the reason
 * after an EntryPoint address. A v0.7 or v0.8 EntryPoint address makes it a v0.7 request (the token paymaster's
 * when the context names a fee token).
 */
export const pm_sponsorUserOperation: RpcMethod = async (params, ctx) => {
  const later = laterEntryPoint(ctx.chain, params[1], asksForToken(params[2]) ? "token" : "verifying");
  if (later) return sponsorV07Request(params, ctx, later);
  refuseV07InModeObjectForm(params);
  const { userOp, signature } = readUserOperation(params[0]);
  refuseTokenAfterV06EntryPoint(params);
  const request = parseModeParams(params);
  const { mode } = request;
  ctx.decision.mode = mode.mode === "ERC20" ? "erc20" : "sponsored";
  if (mode.mode === "ERC20") {
    const signed = await sponsor(ctx, {
      version: "0.6",
      userOp,
      signature,
      mode: {
        mode: "ERC20",
        expirySeconds: mode.expirySeconds,
        calculateGasLimits: mode.calculateGasLimits,
        feeToken: mode.tokenInfo.feeTokenAddress,
        feeTokenLabel: "params[1].tokenInfo.feeTokenAddress",
      },
    });
    const result: Erc20SponsorResult = {
      mode: "ERC20",
      MODE: "ERC20",
      paymasterAndData: signed.answer.paymasterAndData,
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
  const outcome = await sponsor(ctx, { version: "0.6", userOp, signature, mode });
  if (outcome.answer.reason !== undefined && request.form === "entryPoint") {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${outcome.answer.reason}`);
  }
  const result = sponsoredResult(outcome.answer);
  // Fees the client did not send are ours, and the signature covers them: the client must put exactly these in.
  return outcome.feesChosen ? { ...result, ...chosenFees(outcome.userOp) } : result;
};

/**
 * `[userOp, entryPoint, context?]` with a v0.7 or v0.8 EntryPoint: Pimlico's result, our paymaster fields and the
 * account's gas they cover, all hex; a refusal is -32003 with the reason.
 */
async function sponsorV07Request(
  params: unknown[],
  ctx: MethodContext,
  target: NonNullable<ReturnType<typeof laterEntryPoint>>,
): Promise<SponsoredResultV07> {
  const { userOp, signature } = readUserOperationV07(params[0], target.version);
  if (asksForToken(params[2])) {
    const { expirySeconds, feeToken, feeTokenLabel } = parseTokenContext(params[2], "params[2]");
    ctx.decision.mode = "erc20";
    const signed = await sponsor(ctx, {
      version: target.version,
      target,
      userOp,
      signature,
      mode: { mode: "ERC20", expirySeconds, feeToken, feeTokenLabel },
    });
    return gasResult(signed.answer);
  }
  const mode = parseSponsoredContext(params[2], "params[2]", "unreachable: mode ERC20 is read as ERC20 above");
  ctx.decision.mode = "sponsored";
  const { answer } = await sponsor(ctx, { version: target.version, target, userOp, signature, mode });
  if (answer.reason !== undefined) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  return gasResult(answer);
}

function gasResult(answer: SponsorAnswerV07): SponsoredResultV07 {
  return {
    ...paymasterFieldsResult(answer),
    callGasLimit: toHex(answer.callGasLimit),
    verificationGasLimit: toHex(answer.verificationGasLimit),
    preVerificationGas: toHex(answer.preVerificationGas),
  };
}

/**
 * Biconomy's form `[userOp, modeObject]` is EntryPoint v0.6's: an operation with v0.7 members there would be signed
 * as a v0.6 one the wallet cannot use, so it is refused with the form that serves it.
 */
export function refuseV07InModeObjectForm(params: unknown[]): void {
  if (typeof params[1] === "string" || !hasV07Fields(params[0])) return;
  throw invalidParams(
    "params[0] has EntryPoint v0.7 members (factory, paymaster fields or eip7702Auth), but [userOp, modeObject] " +
      "serves EntryPoint v0.6 operations; for v0.7 or v0.8 send [userOp, entryPointAddress, context]",
  );
}

/**
 * A fee token in the context after v0.6's EntryPoint asks for ERC20 mode, which this form does not serve for v0.6:
 * refused rather than silently sponsored in SPONSORED mode.
 */
function refuseTokenAfterV06EntryPoint(params: unknown[]): void {
  if (typeof params[1] !== "string" || !namesToken(params[2])) return;
  throw invalidParams(
    "params[2].token: ERC20 mode for EntryPoint v0.6 operations is served by the mode object form " +
      '[userOp, {mode: "ERC20", tokenInfo: {feeTokenAddress}}] and by the ERC-7677 methods with the context { token }',
  );
}

const chosenFees = (userOp: SignableUserOperation) => ({
  maxFeePerGas: toHex(userOp.maxFeePerGas),
  maxPriorityFeePerGas: toHex(userOp.maxPriorityFeePerGas),
});
