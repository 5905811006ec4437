import Type, { type Static } from "typebox";
import { Address } from "../primitives";
import { gasFields, OptionalBytes, OptionalUint, partialGasFields, RpcAddress, RpcBytes, RpcUint } from "./fields";
import { withMessages } from "./messages";

/**
 * An EntryPoint v0.7/v0.8 user operation in its unpacked JSON form (the one bundlers and viem send): the factory and
 * the paymaster are separate fields instead of v0.6's initCode and paymasterAndData. v0.8 adds the optional EIP-7702
 * authorization. The methods read it when the request's EntryPoint is a v0.7 or v0.8 one (src/rpc/userOperationV07Input.ts).
 */
const Eip7702Authorization = Type.Object(
  {
    chainId: RpcUint,
    address: RpcAddress,
    nonce: RpcUint,
    yParity: RpcUint,
    r: RpcUint,
    s: RpcUint,
  },
  { title: "Eip7702Authorization", description: "EIP-7702 authorization that delegates the sender to an account" },
);

/** The factory: an address, or on v0.8 the EIP-7702 marker as viem and bundlers send it, the two bytes 0x7702. */
const OptionalFactory = Type.Optional(
  // The plain Address inside: its own words would otherwise name only the address form.
  withMessages(Type.Union([Address, Type.Literal("0x7702"), Type.Null()]), {
    problem: "must be an address (0x followed by 40 hex digits) or the EIP-7702 marker 0x7702",
  }),
);

const OptionalAddress = Type.Optional(
  withMessages(Type.Union([RpcAddress, Type.Null()]), { problem: "must be an address: 0x followed by 40 hex digits" }),
);

export const PartialUserOperationV07 = withMessages(
  Type.Object(
    {
      sender: RpcAddress,
      nonce: RpcUint,
      factory: OptionalFactory,
      factoryData: OptionalBytes,
      callData: OptionalBytes,
      ...partialGasFields,
      paymaster: OptionalAddress,
      paymasterVerificationGasLimit: OptionalUint,
      paymasterPostOpGasLimit: OptionalUint,
      paymasterData: OptionalBytes,
      signature: OptionalBytes,
      eip7702Auth: Type.Optional(Type.Union([Eip7702Authorization, Type.Null()])),
    },
    {
      title: "PartialUserOperationV07",
      description: "EntryPoint v0.7, v0.8 or v0.9 user operation; gas limits and fees may be left out for an estimate",
    },
  ),
  { problem: "must be an object" },
);
export type PartialUserOperationV07 = Static<typeof PartialUserOperationV07>;

export const UserOperationV07 = Type.Object(
  {
    sender: RpcAddress,
    nonce: RpcUint,
    factory: Type.Optional(RpcAddress),
    factoryData: Type.Optional(RpcBytes),
    callData: RpcBytes,
    ...gasFields,
    paymaster: Type.Optional(RpcAddress),
    paymasterVerificationGasLimit: Type.Optional(RpcUint),
    paymasterPostOpGasLimit: Type.Optional(RpcUint),
    paymasterData: Type.Optional(RpcBytes),
    signature: RpcBytes,
    eip7702Auth: Type.Optional(Eip7702Authorization),
  },
  { title: "UserOperationV07", description: "EntryPoint v0.7, v0.8 or v0.9 user operation, complete" },
);
export type UserOperationV07 = Static<typeof UserOperationV07>;
