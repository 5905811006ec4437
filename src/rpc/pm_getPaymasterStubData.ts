import { tokenStubV06 } from "../actions/erc20Erc7677V06";
import { tokenStubFieldsV07 } from "../actions/erc20V07";
import { getPaymasterStubData } from "../actions/getPaymasterStubData";
import { paymasterStubFieldsV07 } from "../actions/paymasterV07";
import { RpcError, SPONSORSHIP_REFUSED } from "../errors";
import type { PaymasterStubDataResult, PaymasterStubDataResultV07 } from "../schemas/rpc/pm_getPaymasterStubData";
import { parseErc7677Params } from "./erc7677Params";
import type { RpcMethod } from "./methodContext";
import { paymasterFieldsResult } from "./paymasterFieldsV07";

/**
 * ERC-7677 `pm_getPaymasterStubData` (src/actions/getPaymasterStubData.ts, paymasterV07.ts): stand-in paymaster
 * fields for the bundler's estimate, of the final length; nothing is decided or signed yet. With a fee token in the
 * context, the token paymaster's, carrying today's price (src/actions/erc20V07.ts, erc20Erc7677V06.ts).
 */
export const pm_getPaymasterStubData: RpcMethod = async (params, ctx) => {
  const request = parseErc7677Params(params, ctx);
  if (request.version !== "0.6") {
    const { mode } = request;
    const stub =
      mode.mode === "ERC20"
        ? await tokenStubFieldsV07(ctx, { ...mode, target: request.target, userOp: request.userOp })
        : paymasterStubFieldsV07(ctx, request.target, request.userOp, mode.expirySeconds);
    const result: PaymasterStubDataResultV07 = { ...paymasterFieldsResult(stub), isFinal: false };
    return result;
  }
  if (request.mode.mode === "ERC20") {
    const result: PaymasterStubDataResult = { paymasterAndData: await tokenStubV06(ctx, request.mode), isFinal: false };
    return result;
  }
  const paymasterAndData = getPaymasterStubData(ctx, request.mode.expirySeconds);
  if (!paymasterAndData) {
    throw new RpcError(
      SPONSORSHIP_REFUSED,
      `Not sponsored: no verifying paymaster is configured for chain ${ctx.chain.chainId} (${ctx.chain.name})`,
    );
  }
  const result: PaymasterStubDataResult = { paymasterAndData, isFinal: false };
  return result;
};
