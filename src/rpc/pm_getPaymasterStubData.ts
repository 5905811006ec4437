import { paymasterStub } from "../actions/stub";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterStubDataResult, PaymasterStubDataResultV07 } from "../schemas/rpc/pm_getPaymasterStubData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterPartResult } from "./paymasterPartResult";

/**
 * ERC-7677 `pm_getPaymasterStubData` (src/actions/stub.ts): stand-in paymaster fields for the bundler's estimate, of
 * the final length, once our paymaster passes its contract checks and the rules that spend nothing find the operation
 * sponsorable; an operation that cannot be is refused with -32003 and the reason, as pm_getPaymasterData would refuse
 * it. Nothing is signed, recorded or
 * reserved. With a fee token in the context, the token paymaster's stub, carrying today's price.
 */
export const pm_getPaymasterStubData: RpcMethod = async (params, ctx) => {
  const answer = await paymasterStub(ctx, parseErc7677Params(params, ctx, true));
  if ("refused" in answer) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.refused}`);
  const { stub } = answer;
  // ERC-7677's sponsor, for the wallet to show who pays; set by the dApp (PATCH paymasterParameters, sponsorInfo).
  const sponsor = ctx.setup.sponsor ? { sponsor: ctx.setup.sponsor } : {};
  // Never final: our paymasters sign over the gas limits the bundler estimates after this stub, so the signed data
  // can only be made by pm_getPaymasterData.
  const result: PaymasterStubDataResult | PaymasterStubDataResultV07 = {
    ...sponsor,
    ...paymasterPartResult(stub),
    ...answer.extras,
    isFinal: false,
  };
  return result;
};
