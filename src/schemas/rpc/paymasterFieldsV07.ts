import { Address, HexBytes, HexQuantity } from "../primitives";
import { withOptions } from "./messages";

/**
 * The paymaster fields of an EntryPoint v0.7/v0.8 answer (ERC-7677's and Pimlico's): the client puts them in the
 * operation as they are; the signature covers both gas limits.
 */
export const paymasterFieldsV07 = {
  paymaster: withOptions(Address, {
    description: "our paymaster for the request's EntryPoint: the verifying one, or in ERC20 mode the token paymaster",
  }),
  paymasterData: withOptions(HexBytes, {
    description:
      "abi.encode(paymasterId, validUntil, validAfter, signature): 256 bytes, 160 when parallel signing puts the " +
      "signature in paymasterSignature (v0.9); in ERC20 mode the token paymaster's 258 bytes (price source, the " +
      "signed token terms, the signature). validUntil and validAfter are unix seconds, or on EntryPoint v0.9 for " +
      "a paymaster with validityBlocks set, block numbers with bit 47 set on both",
  }),
  paymasterVerificationGasLimit: withOptions(HexQuantity, { description: "the paymaster's validation gas limit" }),
  paymasterPostOpGasLimit: withOptions(HexQuantity, {
    description: "the gas limit of our postOp, which the account cannot estimate",
  }),
};
