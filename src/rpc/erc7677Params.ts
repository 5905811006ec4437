// ERC-7677, the paymaster web service methods of viem's createPaymasterClient: params are
// [userOp, entryPoint, chainId (hex), context]. The EntryPoint picks the version: v0.6's operation shape, or v0.7's
// (also v0.8's) when it is a later EntryPoint the chain serves. The context is this service's SPONSORED mode object
// (sponsorshipInfo, expiryDuration), or ERC20 mode with the fee token as `token` (src/rpc/tokenContext.ts).

import { erc20Kind, type UpFrontRequest } from "../actions/kinds/permitTokenKind";
import { sponsoredKind } from "../actions/kinds/sponsoredKind";
import { packedOperation } from "../actions/operations/packedOperation";
import { unpackedOperation } from "../actions/operations/unpackedOperation";
import type { KindChoice, StepRequest } from "../actions/stepRequest";
import { invalidParams } from "../errors";
import { ChainId } from "../schemas/rpc/erc7677Params";
import { laterEntryPoint, unsupportedEntryPoint, v06Target } from "./entryPointChoice";
import type { MethodContext } from "./methodContext";
import { parseSponsoredContext } from "./mode";
import { address } from "./params";
import { type Erc7677Params, erc7677ParamsForm } from "./paramsForm";
import { schemaCheck } from "./schemaCheck";
import { refuseSigningPhaseOutsideV09 } from "./signingPhase";
import { parseTokenContext } from "./tokenContext";
import { parseUserOperation } from "./userOperationInput";
import { readUserOperationV07 } from "./userOperationV07Input";

/** Unreachable: a context asking for ERC20 mode is read as such before. */
const ERC20_REFUSAL = "a context asking for ERC20 mode names the fee token as `token`";

/** The params sorted by their form's schema (src/rpc/paramsForm.ts), then each position read by its version's schema. */
export function parseErc7677Params(params: unknown[], ctx: MethodContext, forStub = false): StepRequest {
  const form = erc7677ParamsForm(params);
  const kindName = form.asksForToken ? "token" : "verifying";
  const target = form.entryPoint === undefined ? undefined : laterEntryPoint(ctx.chain, form.entryPoint, kindName);
  if (target) {
    const { userOp } = readUserOperationV07(form.userOp, target.version);
    checkChainId(form.chainId, ctx);
    const upFront = {
      paymaster: ctx.chain.entryPoints.get(target.version)?.permitTokenPaymaster,
      version: target.version,
      userOp,
      forStub,
    };
    const kind = readContext(form, upFront);
    refuseSigningPhaseOutsideV09(form.context, "params[3]", target.version);
    return { operation: packedOperation(target, userOp), kind };
  }
  const userOp = parseUserOperation(form.userOp);
  const entryPoint = address(form.entryPoint, "params[1]");
  if (entryPoint !== ctx.chain.entryPoint.toLowerCase()) throw unsupportedEntryPoint(ctx.chain, entryPoint);
  checkChainId(form.chainId, ctx);
  const kind = readContext(form);
  const operation = unpackedOperation(v06Target(ctx.chain, form.asksForToken), userOp);
  refuseSigningPhaseOutsideV09(form.context, "params[3]", operation.version.name);
  return { operation, kind };
}

/**
 * params[3]: ERC20 mode when it asks for it (by the form's schema), else SPONSORED mode. On v0.7 on (`upFront`), ERC20
 * mode may be served by the up-front token paymaster (src/actions/kinds/permitTokenKind.ts).
 */
function readContext(form: Erc7677Params, upFront?: UpFrontRequest): KindChoice {
  return form.asksForToken
    ? erc20Kind(parseTokenContext(form.context, "params[3]"), upFront)
    : sponsoredKind(parseSponsoredContext(form.context, "params[3]", ERC20_REFUSAL));
}

const chainIdCheck = schemaCheck<typeof ChainId, string | number>(ChainId);

function checkChainId(value: unknown, ctx: MethodContext): void {
  // null is read as absent, as everywhere else in the params; any other chain than ours is refused below.
  const chainId = BigInt(chainIdCheck.read(value ?? undefined, "params[2]"));
  if (chainId !== BigInt(ctx.chain.chainId)) {
    throw invalidParams(`params[2]: chain ${chainId} is not this endpoint's chain ${ctx.chain.chainId}`);
  }
}
