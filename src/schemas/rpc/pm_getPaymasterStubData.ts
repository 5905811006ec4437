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
      description: "276 bytes like the final one, with a signature that recovers to nobody",
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
    description: "EntryPoint v0.7/v0.8: paymasterData of the final length with a signature that recovers to nobody",
  },
);
export type PaymasterStubDataResultV07 = Static<typeof PaymasterStubDataResultV07>;

export const pm_getPaymasterStubData: MethodDescriptor = {
  name: "pm_getPaymasterStubData",
  summary: "ERC-7677: a stand-in paymasterAndData for gas estimation",
  description:
    "Runs the rules that spend nothing (pause, funding and rules, wallet deployment, whitelist, cost cap, time window, " +
    "the deposit read without a hold) over the operation at its cheapest (gas not sent yet counts as zero), and refuses " +
    "with -32003 and the rule's reason an operation that can never be sponsored. Nothing is signed, recorded or " +
    "reserved and no webhook is called: pm_getPaymasterData decides over the final gas and signs.",
  params: erc7677Params,
  result: {
    name: "stub",
    description: "v0.6: the stub paymasterAndData; v0.7/v0.8: the stub paymaster fields",
    schema: Type.Union([PaymasterStubDataResult, PaymasterStubDataResultV07]),
  },
  errors: [-32003],
};
