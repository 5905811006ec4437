import Type from "typebox";
import { Address } from "../primitives";
import { RpcUint } from "./fields";
import { withMessages, withOptions } from "./messages";
import type { ParamDescriptor } from "./method";
import { PaymasterContext } from "./mode";
import { PartialUserOperationV06 } from "./userOperationV06";
import { PartialUserOperationV07 } from "./userOperationV07";

/** The chain the client means, which must be the endpoint's; absent and null are refused as missing. */
export const ChainId = withMessages(RpcUint, {
  problem: "must be a non-negative integer as 0x hex, a decimal string or a number",
  missing: "is required: the chain id",
});

/** ERC-7677's params, as viem's createPaymasterClient sends them: [userOp, entryPoint, chainId (hex), context]. */
export const erc7677Params: ParamDescriptor[] = [
  {
    name: "userOperation",
    description:
      "the user operation, in the shape of the EntryPoint's version (v0.6's, or v0.7's for v0.7, v0.8 and v0.9)",
    required: true,
    schema: Type.Union([PartialUserOperationV06, PartialUserOperationV07]),
  },
  {
    name: "entryPoint",
    description: "an EntryPoint the chain serves (v0.6, v0.7, v0.8 or v0.9): it picks the version",
    required: true,
    schema: withOptions(Address, { title: "EntryPoint" }),
  },
  { name: "chainId", description: "the endpoint's chain, as hex", required: true, schema: ChainId },
  {
    name: "context",
    description: "the mode object's fields (SPONSORED mode); `token`, the fee token, selects ERC20 mode",
    required: false,
    schema: PaymasterContext,
  },
];
