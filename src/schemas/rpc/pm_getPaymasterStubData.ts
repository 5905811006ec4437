import Type, { type Static } from "typebox";
import { HexBytes } from "../primitives";
import { erc7677Params } from "./erc7677Params";
import { withOptions } from "./messages";
import type { MethodDescriptor } from "./method";

export const PaymasterStubDataResult = Type.Object(
  {
    paymasterAndData: withOptions(HexBytes, {
      description: "276 bytes like the final one, with a signature that recovers to nobody",
    }),
    isFinal: Type.Literal(false),
  },
  { title: "PaymasterStubDataResult" },
);
export type PaymasterStubDataResult = Static<typeof PaymasterStubDataResult>;

export const pm_getPaymasterStubData: MethodDescriptor = {
  name: "pm_getPaymasterStubData",
  summary: "ERC-7677: a stand-in paymasterAndData for gas estimation",
  description: "Nothing is decided or signed: pm_getPaymasterData does both.",
  params: erc7677Params,
  result: { name: "stub", description: "the stub paymasterAndData", schema: PaymasterStubDataResult },
  errors: [-32003],
};
