// EntryPoint v0.6 for the sponsorship engine: the operation carries initCode and one paymasterAndData (our address,
// then the paymaster kind's data); the paymaster has no gas limits of its own, and postOp runs on the operation's
// verificationGasLimit, which the prefund counts three times.
import { concat, type Hex } from "viem";
import type { PartialUserOperation } from "../../sponsorship/partialUserOperation";
import { ENTRY_POINT_V06_ADDRESS } from "./entryPoint";
import type { EntryPointVersion, PaymasterPart } from "./entryPointVersion";
import { decimalFields, FEE_FIELDS, GAS_LIMIT_FIELDS, requiredGas } from "./operationReading";
import { maxChargeWei, worstCaseCostWei } from "./prefund";
import { paymasterHashPrefixV06 } from "./userOperation";
import { getUserOpHash } from "./userOpHash";

/** The operation with every field the paymaster signature covers. */
export type SignableUserOperation = Required<PartialUserOperation>;

/** v0.6's paymasterAndData: the paymaster's address, lowercase like the rest, then its data. */
export function paymasterAndDataV06(part: PaymasterPart): Hex {
  return concat([part.paymaster.toLowerCase() as Hex, part.paymasterData]);
}

/** The gas fields v0.6's worst case reads. */
const WORST_CASE_GAS = ["callGasLimit", "verificationGasLimit", "preVerificationGas", "maxFeePerGas"] as const;
const WEBHOOK_GAS = [...GAS_LIMIT_FIELDS, ...FEE_FIELDS] as const;

export const entryPointV06: EntryPointVersion<SignableUserOperation> = {
  name: "0.6",
  view: (op: PartialUserOperation) => ({
    sender: op.sender,
    nonce: op.nonce,
    callData: op.callData,
    deployment: op.initCode === "0x" ? undefined : { kind: "factory", what: "initCode" },
  }),
  worstCaseCostWei: (op: PartialUserOperation) => worstCaseCostWei(requiredGas(op, WORST_CASE_GAS)),
  // The contract's postOp overhead comes on top of the prefund (maxChargeWei).
  depositChargeWei: (op: PartialUserOperation) => maxChargeWei(requiredGas(op, WORST_CASE_GAS)),
  webhookJson: (op: PartialUserOperation) => ({
    sender: op.sender,
    nonce: op.nonce.toString(),
    initCode: op.initCode,
    callData: op.callData,
    ...decimalFields(op, WEBHOOK_GAS),
  }),
  canonicalAddress: ENTRY_POINT_V06_ADDRESS,
  answerPart: (_paymaster, part) => ({ paymasterAndData: part ? paymasterAndDataV06(part) : "0x" }),
  paymasterHashPrefix: paymasterHashPrefixV06,
  userOpHash: (op, part, entryPoint, chainId) =>
    getUserOpHash({ ...op, paymasterAndData: paymasterAndDataV06(part) }, entryPoint, chainId),
  prefundCountsPostOp: false,
  signsInParallel: false,
  readsBlockWindows: false,
};
