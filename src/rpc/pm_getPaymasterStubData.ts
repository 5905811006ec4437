import { tokenStubV06 } from "../actions/erc20Erc7677V06";
import { tokenStubFieldsV07 } from "../actions/erc20V07";
import { getPaymasterStubData, type StubAnswer } from "../actions/getPaymasterStubData";
import { paymasterStubV07 } from "../actions/paymasterV07";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterStubDataResult, PaymasterStubDataResultV07 } from "../schemas/rpc/pm_getPaymasterStubData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterFieldsResult } from "./paymasterFieldsV07";

/**
 * ERC-7677 `pm_getPaymasterStubData` (src/actions/getPaymasterStubData.ts, paymasterV07.ts): stand-in paymaster
 * fields for the bundler's estimate, of the final length, once the rules that spend nothing find the operation
 * sponsorable; an operation that can never be is refused with -32003 and the rule's reason, as pm_getPaymasterData
 * would refuse it. Nothing is signed, recorded or reserved. With a fee token in the context, the token paymaster's
 * stub, carrying today's price (src/actions/erc20V07.ts, erc20Erc7677V06.ts).
 */
export const pm_getPaymasterStubData: RpcMethod = async (params, ctx) => {
  const request = parseErc7677Params(params, ctx);
  const { mode } = request;
  if (request.version !== "0.6") {
    const stub =
      mode.mode === "ERC20"
        ? await tokenStubFieldsV07(ctx, { ...mode, target: request.target, userOp: request.userOp })
        : sponsorable(await paymasterStubV07(ctx, { ...mode, target: request.target, userOp: request.userOp }));
    const result: PaymasterStubDataResultV07 = { ...paymasterFieldsResult(stub), isFinal: false };
    return result;
  }
  if (mode.mode === "ERC20") {
    const result: PaymasterStubDataResult = {
      paymasterAndData: await tokenStubV06(ctx, request.userOp, mode),
      isFinal: false,
    };
    return result;
  }
  const paymasterAndData = sponsorable(await getPaymasterStubData(ctx, { ...mode, userOp: request.userOp }));
  const result: PaymasterStubDataResult = { paymasterAndData, isFinal: false };
  return result;
};

/** The stub, or the refusal in pm_getPaymasterData's words. */
function sponsorable<Stub>(answer: StubAnswer<Stub>): Stub {
  if ("refused" in answer) throw new RpcError(SPONSORSHIP_REFUSED, `Not sponsored: ${answer.refused}`);
  return answer.stub;
}
