import Type, { type Static } from "typebox";
import { HexBytes } from "../primitives";
import { erc7677Params } from "./erc7677Params";
import { withOptions } from "./messages";
import type { MethodDescriptor } from "./method";
import { paymasterFieldsV07 } from "./paymasterFieldsV07";

export const PaymasterDataResult = Type.Object(
  { paymasterAndData: withOptions(HexBytes, { description: "the signed 276-byte paymasterAndData" }) },
  { title: "PaymasterDataResult" },
);
export type PaymasterDataResult = Static<typeof PaymasterDataResult>;

export const PaymasterDataResultV07 = Type.Object(paymasterFieldsV07, {
  title: "PaymasterDataResultV07",
  description: "EntryPoint v0.7/v0.8: the signed paymaster fields",
});
export type PaymasterDataResultV07 = Static<typeof PaymasterDataResultV07>;

export const pm_getPaymasterData: MethodDescriptor = {
  name: "pm_getPaymasterData",
  summary: "ERC-7677: the signed paymasterAndData",
  description:
    "The operation arrives with its estimated gas; the SPONSORED mode rules decide over exactly those values. " +
    "A refusal is error -32003 with the rule's reason.",
  params: erc7677Params,
  result: {
    name: "paymasterData",
    description: "v0.6: the signed paymasterAndData; v0.7/v0.8: the signed paymaster fields",
    schema: Type.Union([PaymasterDataResult, PaymasterDataResultV07]),
  },
  errors: [-32003],
};
