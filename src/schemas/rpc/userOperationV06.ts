import Type, { type Static } from "typebox";
import { gasFields, OptionalBytes, partialGasFields, RpcAddress, RpcBytes, RpcUint } from "./fields";
import { withMessages } from "./messages";

/**
 * An EntryPoint v0.6 user operation as wallets send it for sponsorship (params[0] of every method). The gas fields may
 * be left out when the service estimates them; `signature` and `paymasterAndData` are read only to size an estimate.
 * Members not listed (a v0.7 client's `factory`, say) are ignored. The v0.7/v0.8 shape is userOperationV07.ts.
 */
export const PartialUserOperationV06 = withMessages(
  Type.Object(
    {
      sender: RpcAddress,
      nonce: RpcUint,
      initCode: OptionalBytes,
      callData: OptionalBytes,
      ...partialGasFields,
      paymasterAndData: OptionalBytes,
      signature: OptionalBytes,
    },
    {
      title: "PartialUserOperationV06",
      description:
        "EntryPoint v0.6 user operation; gas limits and fees may be left out when calculateGasLimits is true",
    },
  ),
  { problem: "must be an object" },
);
export type PartialUserOperationV06 = Static<typeof PartialUserOperationV06>;

/** The complete v0.6 operation, every field present: what the EntryPoint executes once paymasterAndData is in. */
const UserOperationV06 = Type.Object(
  {
    sender: RpcAddress,
    nonce: RpcUint,
    initCode: RpcBytes,
    callData: RpcBytes,
    ...gasFields,
    paymasterAndData: RpcBytes,
    signature: RpcBytes,
  },
  { title: "UserOperationV06", description: "EntryPoint v0.6 user operation, complete" },
);
export type UserOperationV06 = Static<typeof UserOperationV06>;
