import { FEE_FIELDS, GAS_LIMIT_FIELDS, type PartialUserOperation } from "../sponsorship/partialUserOperation";
import { type SignableUserOperation, sponsor } from "../sponsorship/sponsor";
import type { MethodContext, RpcMethod } from "./methodContext";
import { parseMode, type SponsoredMode } from "./mode";
import { invalidParams } from "./rpcError";
import { sponsoredResult } from "./sponsoredResult";
import { parseUserOperation } from "./userOperationInput";

/**
 * `pm_sponsorUserOperation` (and `pm_getFeeQuoteOrData`, which answers SPONSORED mode the same way): a signed
 * paymasterAndData for a partial user operation, or `0x` with the reason it is not sponsored.
 */
export const pm_sponsorUserOperation: RpcMethod = async (params, ctx) => {
  const userOp = parseUserOperation(params[0]);
  const mode = parseMode(params[1]);
  if (mode.mode === "ERC20") {
    throw invalidParams(`mode ERC20 is not available on chain ${ctx.chain.chainId}: no token paymaster is configured`);
  }
  return sponsoredResult(await sponsorInMode(userOp, mode, ctx));
};

function sponsorInMode(userOp: PartialUserOperation, mode: SponsoredMode, ctx: MethodContext) {
  if (mode.entryPoint && mode.entryPoint !== ctx.chain.entryPoint.toLowerCase()) {
    throw invalidParams(`params[1]: EntryPoint ${mode.entryPoint} is not supported; use ${ctx.chain.entryPoint}`);
  }
  return sponsor(ctx.deps, {
    setup: ctx.setup,
    chain: ctx.chain,
    userOp: signable(userOp, mode.calculateGasLimits),
    expirySeconds: mode.expirySeconds,
    smartAccount: mode.smartAccount,
    webhookData: mode.webhookData,
  });
}

/** Until gas estimation exists, the signature can only cover gas values the client sent. */
function signable(userOp: PartialUserOperation, calculateGasLimits: boolean): SignableUserOperation {
  const missingGas = GAS_LIMIT_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingGas.length > 0) {
    throw invalidParams(
      calculateGasLimits
        ? `calculateGasLimits is not available yet: send the gas limits (missing: ${missingGas.join(", ")})`
        : `params[0] is missing ${missingGas.join(", ")}: the signature covers the gas limits, so send them`,
    );
  }
  const missingFees = FEE_FIELDS.filter((field) => userOp[field] === undefined);
  if (missingFees.length > 0) throw invalidParams(`params[0] is missing ${missingFees.join(", ")}`);
  return userOp as SignableUserOperation;
}
