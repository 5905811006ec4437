import type { Address, Hex } from "viem";

/** A user operation as wallets send it for sponsorship: gas fields may be missing, signatures are ignored. */
export interface PartialUserOperation {
  sender: Address;
  nonce: bigint;
  initCode: Hex;
  callData: Hex;
  callGasLimit?: bigint;
  verificationGasLimit?: bigint;
  preVerificationGas?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
}

import { FEE_FIELDS, GAS_LIMIT_FIELDS } from "../bindings/entryPoints/operationReading";

export { FEE_FIELDS, GAS_LIMIT_FIELDS };

/**
 * The gas limits an operation carries as zero though it cannot run on none: validation and the bundler's share always
 * cost gas, and a call needs gas whenever there is callData. Such an operation is never mined, so it is never signed.
 */
export function zeroGasLimits(
  userOp: Pick<PartialUserOperation, (typeof GAS_LIMIT_FIELDS)[number] | "callData">,
): string[] {
  return GAS_LIMIT_FIELDS.filter(
    (field) => userOp[field] === 0n && (field !== "callGasLimit" || userOp.callData.length > 2),
  );
}

/** Far above any block's gas limit, and small enough to answer as an exact JSON number. */
export const MAX_GAS = 10_000_000_000n;
/** 2^128 wei per gas is beyond any fee ever paid; it keeps worst-case costs within reach of a uint256. */
export const MAX_FEE = (1n << 128n) - 1n;
