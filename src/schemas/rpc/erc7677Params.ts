import { Address } from "../primitives";
import { RpcUint } from "./fields";
import { withOptions } from "./messages";
import type { ParamDescriptor } from "./method";
import { SponsoredContext } from "./mode";
import { PartialUserOperationV06 } from "./userOperationV06";

/** ERC-7677's params, as viem's createPaymasterClient sends them: [userOp, entryPoint, chainId (hex), context]. */
export const erc7677Params: ParamDescriptor[] = [
  { name: "userOperation", description: "the user operation", required: true, schema: PartialUserOperationV06 },
  {
    name: "entryPoint",
    description: "the EntryPoint the chain serves (v0.6)",
    required: true,
    schema: withOptions(Address, { title: "EntryPoint" }),
  },
  { name: "chainId", description: "the endpoint's chain, as hex", required: true, schema: RpcUint },
  {
    name: "context",
    description: "the mode object's fields, SPONSORED mode only",
    required: false,
    schema: SponsoredContext,
  },
];
