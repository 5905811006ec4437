import Type, { type Static } from "typebox";
import { HexBytes } from "../primitives";
import { erc7677Params } from "./erc7677Params";
import { withOptions } from "./messages";
import type { MethodDescriptor } from "./method";
import { paymasterFieldsV07 } from "./paymasterFieldsV07";

export const PaymasterDataResult = Type.Object(
  {
    paymasterAndData: withOptions(HexBytes, {
      description: "the signed paymasterAndData: 276 bytes, 278 for the token paymaster in ERC20 mode",
    }),
  },
  { title: "PaymasterDataResult" },
);
export type PaymasterDataResult = Static<typeof PaymasterDataResult>;

export const PaymasterDataResultV07 = Type.Object(paymasterFieldsV07, {
  title: "PaymasterDataResultV07",
  description: "EntryPoint v0.7, v0.8 and v0.9: the signed paymaster fields",
});
export type PaymasterDataResultV07 = Static<typeof PaymasterDataResultV07>;

const PaymasterDataResultV09Parallel = Type.Object(
  {
    ...paymasterFieldsV07,
    paymasterSignature: withOptions(HexBytes, {
      description:
        'EntryPoint v0.9 parallel signing: at signingPhase "commit" a 65-byte placeholder the account signs over ' +
        '(the user operation hash leaves it out but keeps the magic); at "finalize" the paymaster\'s signature over ' +
        "that hash, to send as the operation's paymasterSignature",
    }),
  },
  {
    title: "PaymasterDataResultV09Parallel",
    description: "EntryPoint v0.9 with signingPhase in the context: the paymaster fields and the paymasterSignature",
  },
);

export const pm_getPaymasterData: MethodDescriptor = {
  name: "pm_getPaymasterData",
  summary: "ERC-7677: the signed paymasterAndData",
  description:
    "The operation arrives with its estimated gas; the SPONSORED mode rules decide over exactly those values. " +
    "A refusal is error -32003 with the rule's reason. EntryPoint v0.9 parallel signing: the context's " +
    'signingPhase "commit" decides, reserves and signs, and answers a placeholder paymasterSignature; "finalize", ' +
    "with the operation the account signed, answers the real one, or -32003 when the operation changed since commit.",
  params: erc7677Params,
  result: {
    name: "paymasterData",
    description:
      "v0.6: the signed paymasterAndData; v0.7 on: the signed paymaster fields; v0.9 with signingPhase: the fields " +
      "and paymasterSignature",
    schema: Type.Union([PaymasterDataResult, PaymasterDataResultV07, PaymasterDataResultV09Parallel]),
  },
  errors: [-32003],
};
