import { Address, HexBytes, HexQuantity } from "../primitives";
import { withOptions } from "./messages";

/**
 * The paymaster fields of an EntryPoint v0.7/v0.8 answer (ERC-7677's and Pimlico's): the client puts them in the
 * operation as they are; the signature covers both gas limits.
 */
export const paymasterFieldsV07 = {
  paymaster: withOptions(Address, { description: "our verifying paymaster for the request's EntryPoint" }),
  paymasterData: withOptions(HexBytes, {
    description: "256 bytes: abi.encode(paymasterId, validUntil, validAfter, signature)",
  }),
  paymasterVerificationGasLimit: withOptions(HexQuantity, { description: "the paymaster's validation gas limit" }),
  paymasterPostOpGasLimit: withOptions(HexQuantity, {
    description: "the gas limit of our postOp, which the account cannot estimate",
  }),
};
