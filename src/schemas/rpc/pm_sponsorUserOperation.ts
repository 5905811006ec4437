import Type, { type Static } from "typebox";
import { Address, HexBytes, HexQuantity } from "../primitives";
import { withOptions } from "./messages";
import type { MethodDescriptor, ParamDescriptor } from "./method";
import { ModeObject, PaymasterContext } from "./mode";
import { paymasterFieldsV07 } from "./paymasterFieldsV07";
import { PartialUserOperationV06 } from "./userOperationV06";
import { PartialUserOperationV07 } from "./userOperationV07";

/**
 * params of pm_sponsorUserOperation (and pm_getFeeQuoteOrData): the operation, then either the mode object
 * (Biconomy's form) or the EntryPoint's address and an optional context (permissionless's form).
 */
export const sponsorParams: ParamDescriptor[] = [
  {
    name: "userOperation",
    description:
      "the user operation to pay for: v0.6's shape, or after a v0.7, v0.8 or v0.9 EntryPoint address the v0.7 shape " +
      "(factory, the paymaster's fields unpacked)",
    required: true,
    schema: Type.Union([PartialUserOperationV06, PartialUserOperationV07]),
  },
  {
    name: "modeOrEntryPoint",
    description:
      "the mode object (a refusal is a result with paymasterAndData 0x), or the EntryPoint's address (a refusal is " +
      "error -32003)",
    required: true,
    schema: Type.Union([ModeObject, withOptions(Address, { title: "EntryPoint" })]),
  },
  {
    name: "context",
    description:
      "after an EntryPoint address only: the mode object's fields, SPONSORED mode; for v0.7, v0.8 and v0.9 " +
      "operations `token` selects ERC20 mode, and pm_getFeeQuoteOrData quotes `token`/`preferredToken`, `tokenList` " +
      "or (mode ERC20) all",
    required: false,
    schema: PaymasterContext,
  },
];

/** The gas values the signature covers, in the types Biconomy's SDK reads. */
const signedGas = {
  paymasterAndData: HexBytes,
  preVerificationGas: Type.String({ pattern: "^[0-9]+$", description: "decimal string" }),
  verificationGasLimit: Type.Integer({ minimum: 0 }),
  callGasLimit: Type.Integer({ minimum: 0 }),
  maxFeePerGas: Type.Optional(
    withOptions(HexQuantity, { description: "present when the service chose the fees: the client must use them" }),
  ),
  maxPriorityFeePerGas: Type.Optional(HexQuantity),
};

export const SponsoredResult = Type.Object(
  {
    mode: Type.Literal("SPONSORED"),
    MODE: Type.Literal("SPONSORED"),
    ...signedGas,
    reason: Type.Optional(Type.String({ description: "why not sponsored; paymasterAndData is then 0x" })),
  },
  { title: "SponsoredResult", description: "SPONSORED mode: the signed paymasterAndData, or 0x and the reason" },
);
export type SponsoredResult = Static<typeof SponsoredResult>;

export const Erc20SponsorResult = Type.Object(
  { mode: Type.Literal("ERC20"), MODE: Type.Literal("ERC20"), ...signedGas },
  { title: "Erc20SponsorResult", description: "ERC20 mode: the token paymaster's signed paymasterAndData" },
);
export type Erc20SponsorResult = Static<typeof Erc20SponsorResult>;

export const SponsoredResultV07 = Type.Object(
  {
    ...paymasterFieldsV07,
    callGasLimit: HexQuantity,
    verificationGasLimit: HexQuantity,
    preVerificationGas: HexQuantity,
  },
  {
    title: "SponsoredResultV07",
    description:
      "EntryPoint v0.7, v0.8 and v0.9 (Pimlico's shape): our signed paymaster fields and the account's gas values " +
      "they cover",
  },
);
export type SponsoredResultV07 = Static<typeof SponsoredResultV07>;

export const pm_sponsorUserOperation: MethodDescriptor = {
  name: "pm_sponsorUserOperation",
  summary: "Sign a paymasterAndData for a user operation",
  description:
    "SPONSORED mode runs the sponsorship rules and signs with the verifying paymaster, or says why not; ERC20 mode " +
    "signs the token paymaster's terms for a fee token. Missing gas values are estimated when calculateGasLimits is true.",
  params: sponsorParams,
  result: {
    name: "sponsorship",
    description: "the paymasterAndData and the gas values it covers",
    schema: Type.Union([SponsoredResult, Erc20SponsorResult, SponsoredResultV07]),
  },
  errors: [-32002, -32003],
};
