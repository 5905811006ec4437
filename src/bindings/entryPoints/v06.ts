// EntryPoint v0.6 for the sponsorship engine: the operation carries initCode and one paymasterAndData (our address,
// then the paymaster kind's data); the paymaster has no gas limits of its own, and postOp runs on the operation's
// verificationGasLimit, which the prefund counts three times.
import { concat, type Hex } from "viem";
import type { PartialUserOperation } from "../../sponsorship/partialUserOperation";
import { ENTRY_POINT_V06_ADDRESS } from "./entryPoint";
import type { EntryPointVersion, PaymasterPart } from "./entryPointVersion";
import { maxChargeWei, worstCaseCostWei } from "./prefund";
import { paymasterHashPrefixV06 } from "./userOperation";
import { getUserOpHash } from "./userOpHash";

/** The operation with every field the paymaster signature covers. */
export type SignableUserOperation = Required<PartialUserOperation>;

/** v0.6's paymasterAndData: the paymaster's address, lowercase like the rest, then its data. */
export function paymasterAndDataV06(part: PaymasterPart): Hex {
  return concat([part.paymaster.toLowerCase() as Hex, part.paymasterData]);
}

export const entryPointV06: EntryPointVersion<SignableUserOperation> = {
  name: "0.6",
  canonicalAddress: ENTRY_POINT_V06_ADDRESS,
  paymasterGasOf: () => undefined,
  paymasterHashPrefix: paymasterHashPrefixV06,
  userOpHash: (op, part, entryPoint, chainId) =>
    getUserOpHash({ ...op, paymasterAndData: paymasterAndDataV06(part) }, entryPoint, chainId),
  prefundWei: worstCaseCostWei,
  prefundCountsPostOp: false,
  maxDepositChargeWei: maxChargeWei,
  signsInParallel: false,
  readsBlockWindows: false,
};
