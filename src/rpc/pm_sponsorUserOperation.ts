import { type Hex, toHex } from "viem";
import { canEstimateGas } from "../chain/gasEstimation";
import { EstimationUnavailableError, OperationRevertedError } from "../chain/gasEstimationErrors";
import { PLACEHOLDER_PAYMASTER_ID } from "../chain/gasEstimationStub";
import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../sponsorship/partialUserOperation";
import { CLOCK_SKEW_SECONDS, type SignableUserOperation, sponsor } from "../sponsorship/sponsor";
import { sponsorErc20 } from "./erc20Mode";
import type { MethodContext, RpcMethod } from "./methodContext";
import { parseModeParams, type SponsoredMode } from "./mode";
import { observedGasEstimate } from "./observedGasEstimation";
import { bytes, type Fields } from "./params";
import { invalidParams, RpcError, SPONSORSHIP_REFUSED } from "./rpcError";
import { sponsoredResult } from "./sponsoredResult";
import { parseUserOperation } from "./userOperationInput";

/**
 * Server-defined (EIP-1474 "resource unavailable"): gas could not be estimated because the chain's node or bundler
 * is unreachable, too slow or answered nonsense. Answered with HTTP 503, which clients such as viem retry: unlike a
 * refusal, this is a transient failure on our side, and a retry may well succeed. Each attempt ends within
 * GAS_ESTIMATION_TIMEOUT_MS.
 */
export const ESTIMATION_UNAVAILABLE = -32002;

/**
 * `pm_sponsorUserOperation` (and `pm_getFeeQuoteOrData`, which answers SPONSORED mode the same way): a signed
 * paymasterAndData for a partial user operation. A refusal is answered as the params' form asks (src/rpc/mode.ts):
 * `0x` with the reason after a mode object, a -32003 error with the reason after an EntryPoint address. Mode ERC20 is
 * src/rpc/erc20Mode.ts.
 */
export const pm_sponsorUserOperation: RpcMethod = async (params, ctx) => {
  const userOp = parseUserOperation(params[0]);
  const request = parseModeParams(params);
  const { mode } = request;
  ctx.decision.mode = mode.mode === "ERC20" ? "erc20" : "sponsored";
  if (mode.mode === "ERC20") {
    return sponsorErc20(userOp, bytes((params[0] as Fields).signature, "params[0].signature"), mode, ctx);
  }
  if (request.form === "entryPoint" && request.entryPoint !== ctx.chain.entryPoint.toLowerCase()) {
    throw invalidParams(`params[1]: EntryPoint ${request.entryPoint} is not supported; use ${ctx.chain.entryPoint}`);
  }
  const { userOp: signable, feesChosen } = mode.calculateGasLimits
    ? // The account signature is read only to size the estimate's stand-in; parseUserOperation checked params[0].
      await withEstimatedGas(userOp, bytes((params[0] as Fields).signature, "params[0].signature"), mode, ctx)
    : { userOp: asGiven(userOp), feesChosen: false };
  const answer = await sponsor(ctx.deps, {
    setup: ctx.setup,
    chain: ctx.chain,
    userOp: signable,
    expirySeconds: mode.expirySeconds,
    smartAccount: mode.smartAccount,
    webhookData: mode.webhookData,
  });
  ctx.decision.refusedBy = answer.refusedBy;
  if (answer.reason !== undefined && request.form === "entryPoint") {
    throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.reason}`);
  }
  const result = sponsoredResult(answer);
  // Fees the client did not send are ours, and the signature covers them: the client must put exactly these in.
  return feesChosen
    ? {
        ...result,
        maxFeePerGas: toHex(signable.maxFeePerGas),
        maxPriorityFeePerGas: toHex(signable.maxPriorityFeePerGas),
      }
    : result;
};

/**
 * The terms a stub paymasterAndData carries while gas is estimated: the window that sponsor() will sign, to the second
 * or nearly, and the deposit it will name, so that the stub has the final bytes.
 */
export function stubTerms(ctx: MethodContext, expirySeconds: number) {
  const nowSeconds = Math.floor((ctx.deps.now ?? Date.now)() / 1000);
  return {
    paymasterId: ctx.setup.fundingAddress ?? PLACEHOLDER_PAYMASTER_ID,
    validUntil: nowSeconds + expirySeconds,
    validAfter: nowSeconds - CLOCK_SKEW_SECONDS,
  };
}

/** `calculateGasLimits` false: the signature covers the gas values the client sent, so all must be there. */
export function asGiven(userOp: PartialUserOperation): SignableUserOperation {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(
      `params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits, so send them or set ` +
        "calculateGasLimits to true",
    );
  }
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  return userOp as SignableUserOperation;
}

/**
 * `calculateGasLimits` true: the three limits are estimated (src/chain/gasEstimation.ts), before the rules run, so a
 * spending limit reserves over the values that are signed. A limit the client sent is a lower bound: the estimate
 * raises a limit that is too low and keeps one that is higher. Missing fees are chosen by the chain and returned.
 */
async function withEstimatedGas(
  userOp: PartialUserOperation,
  signature: Hex,
  mode: SponsoredMode,
  ctx: MethodContext,
): Promise<{ userOp: SignableUserOperation; feesChosen: boolean }> {
  const missing = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS].filter((field) => userOp[field] === undefined);
  const { chain } = ctx;
  if (!canEstimateGas(chain)) {
    // Nothing to estimate for: sign over what was sent, as without calculateGasLimits.
    if (missing.length === 0) return { userOp: userOp as SignableUserOperation, feesChosen: false };
    const why = chain.verifyingPaymaster ? "it has no RPC or bundler configured" : "it has no verifying paymaster";
    throw invalidParams(
      `Chain ${chain.chainId} (${chain.name}) cannot estimate gas: ${why}; send the gas limits and fees ` +
        `(missing: ${missing.join(", ")})`,
    );
  }
  const started = performance.now();
  try {
    const estimate = await observedGasEstimate(ctx, {
      chain,
      userOp,
      signature,
      // The window that sponsor() will sign, to the second or nearly: the stub has the final bytes.
      terms: stubTerms(ctx, mode.expirySeconds),
    });
    ctx.log.debug(
      { chainId: chain.chainId, source: estimate.source, ms: Math.round(performance.now() - started) },
      "gas estimated",
    );
    const { source: _, ...values } = estimate;
    return {
      userOp: { ...userOp, ...values },
      feesChosen: userOp.maxFeePerGas === undefined || userOp.maxPriorityFeePerGas === undefined,
    };
  } catch (error) {
    if (error instanceof OperationRevertedError) throw invalidParams(`Gas estimation failed: ${error.message}`);
    if (error instanceof EstimationUnavailableError) {
      ctx.log.warn({ chainId: chain.chainId, reason: error.message }, "gas estimation unavailable");
      throw new RpcError(
        ESTIMATION_UNAVAILABLE,
        `Gas estimation is unavailable on chain ${chain.chainId}: ${error.message}`,
        503,
      );
    }
    throw error;
  }
}
