import type { Address, Hex } from "viem";
import type { Eip7702Authorization } from "../bindings/entryPoints/userOperationV07";
import type { LaterEntryPointVersion } from "../config";
import type { PartialUserOperation } from "./partialUserOperation";

/**
 * A v0.7 or v0.8 user operation in the unpacked form wallets send (ERC-7769): the factory and its data in place of
 * initCode, the paymaster's two gas limits beside the account's. Gas fields may be missing while the operation is
 * sponsored; signatures are ignored.
 */
export interface PartialUserOperationV07 extends Omit<PartialUserOperation, "initCode"> {
  /** Which EntryPoint the operation is for; what tells it apart from a v0.6 operation (which has initCode). */
  entryPointVersion: LaterEntryPointVersion;
  /** The account's factory when it is deployed by this operation; in v0.8 also the EIP-7702 marker `0x7702…`. */
  factory?: Address;
  factoryData?: Hex;
  paymasterVerificationGasLimit?: bigint;
  paymasterPostOpGasLimit?: bigint;
  /** v0.8 only: the EIP-7702 authorization the bundler includes with the operation. */
  eip7702Auth?: Eip7702Authorization;
}

/** What the rules decide on: an operation for any EntryPoint version the service knows. */
export type SponsoredUserOperation = PartialUserOperation | PartialUserOperationV07;
