import Type, { type Static } from "typebox";
import { Address, HexBytes, HexQuantity } from "../primitives";
import { withOptions } from "./messages";
import type { MethodDescriptor, ParamDescriptor } from "./method";
import { ModeObject, SponsoredContext } from "./mode";
import { PartialUserOperationV06 } from "./userOperationV06";

/**
 * params of pm_sponsorUserOperation (and pm_getFeeQuoteOrData): the operation, then either the mode object
 * (Biconomy's form) or the EntryPoint's address and an optional context (permissionless's form).
 */
export const sponsorParams: ParamDescriptor[] = [
  {
    name: "userOperation",
    description: "the user operation to pay for",
    required: true,
    schema: PartialUserOperationV06,
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
    description: "after an EntryPoint address only: the mode object's fields, SPONSORED mode",
    required: false,
    schema: SponsoredContext,
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
    schema: Type.Union([SponsoredResult, Erc20SponsorResult]),
  },
  errors: [-32002, -32003],
};
