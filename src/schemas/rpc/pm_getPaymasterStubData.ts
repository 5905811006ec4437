import Type, { type Static } from "typebox";
import { HexBytes } from "../primitives";
import { erc7677Params } from "./erc7677Params";
import { withOptions } from "./messages";
import type { MethodDescriptor } from "./method";
import { paymasterFieldsV07 } from "./paymasterFieldsV07";

/** ERC-7677's sponsor: who pays, as the dApp set it (PATCH paymasterParameters, type sponsorInfo); absent until set. */
const Sponsor = Type.Optional(
  Type.Object(
    {
      name: Type.String({ description: "the sponsor's name" }),
      icon: Type.Optional(
        Type.String({ description: "an RFC 2397 data URI of a PNG, WebP or SVG image, at most 32768 characters" }),
      ),
    },
    {
      title: "Sponsor",
      description: "who pays for the operation, for the wallet to show; absent until the dApp sets it",
    },
  ),
);

/**
 * isFinal is false on every stub: our paymasters sign over the gas limits the bundler estimates after the stub, so the
 * final data needs pm_getPaymasterData.
 */
const IsFinal = Type.Literal(false, {
  description: "always false: the signature covers gas the bundler estimates after this stub",
});

export const PaymasterStubDataResult = Type.Object(
  {
    sponsor: Sponsor,
    paymasterAndData: withOptions(HexBytes, {
      description:
        "the final length (276 bytes; 278 for the token paymaster in ERC20 mode), with a signature that recovers " +
        "to nobody",
    }),
    isFinal: IsFinal,
  },
  { title: "PaymasterStubDataResult" },
);
export type PaymasterStubDataResult = Static<typeof PaymasterStubDataResult>;

export const PaymasterStubDataResultV07 = Type.Object(
  { sponsor: Sponsor, ...paymasterFieldsV07, isFinal: IsFinal },
  {
    title: "PaymasterStubDataResultV07",
    description:
      "EntryPoint v0.7, v0.8 and v0.9: paymasterData of the final length with a signature that recovers to nobody",
  },
);
export type PaymasterStubDataResultV07 = Static<typeof PaymasterStubDataResultV07>;

export const pm_getPaymasterStubData: MethodDescriptor = {
  name: "pm_getPaymasterStubData",
  summary: "ERC-7677: a stand-in paymasterAndData for gas estimation",
  description:
    "Refuses an operation that can never be sponsored, in the words pm_getPaymasterData would use: with -32003 a " +
    "paused paymaster, our paymaster failing a check of its contract on chain (signer, stake, code, EntryPoint, " +
    "chain id) in either mode, and in SPONSORED mode the rules that spend nothing (funding and rules, wallet " +
    "deployment, whitelist, gas-price and cost caps, time windows, sender lists, the deposit read without a hold); " +
    "in ERC20 mode, with -32602, a sender holding less than the charge. The operation is judged at its cheapest (gas " +
    "not sent yet counts as zero). Nothing is signed, recorded or reserved and no webhook is called: " +
    "pm_getPaymasterData decides over the final gas and signs.",
  params: erc7677Params,
  result: {
    name: "stub",
    description: "v0.6: the stub paymasterAndData; v0.7, v0.8 and v0.9: the stub paymaster fields",
    schema: Type.Union([PaymasterStubDataResult, PaymasterStubDataResultV07]),
  },
  errors: [-32003],
};
