// The execution gas of an operation, solved out of what EntryPoint v0.7, v0.8 or v0.9 charged for it in simulation.
// `paid` − preOpGas (at 1 wei per gas) is the gas from the end of validation to the end of the operation plus a penalty
// on unused execution gas, 10 % rounded down, which each version counts differently (EntryPoint.sol, _postExecution):
//
//   v0.7   (callGasLimit + paymasterPostOpGasLimit − used) / 10, always, where `used` is everything after validation:
//          the inner frame with the call, then the post-execution (postOp, the refund, the event). One reading gives
//          `used` exactly (to one gas: two values of `used` may give the same charge; the larger is taken).
//   v0.8,  (callGasLimit − used) / 10 where `used` is the inner frame up to the call's end alone, and nothing while
//   v0.9   less than 40,000 gas is unused. The post-execution gas Y is charged too but outside the penalty's base, so a
//          reading with a penalty gives 0.9 × used + Y, two unknowns: a second reading at a callGasLimit within
//          40,000 of `used` (no penalty) tells them apart. See executionGasV08 below.
import type { LaterEntryPointVersion } from "../config";

const PENALTY_PERCENT = 10n;
/** v0.8 and v0.9 charge no penalty while the unused execution gas is at most this. */
export const PENALTY_FREE_GAS = 40_000n;

/** The penalty the EntryPoint of `version` adds for executing with `used` gas of `limit`. */
export function unusedGasPenalty(version: LaterEntryPointVersion, used: bigint, limit: bigint): bigint {
  if (limit <= used) return 0n;
  if (version !== "0.7" && limit <= used + PENALTY_FREE_GAS) return 0n;
  return ((limit - used) * PENALTY_PERCENT) / 100n;
}

/**
 * The largest `used` below `limit` whose charge with a penalty, used + (limit − used) / 10, is at most `charged`. The
 * charge grows by 0 or 1 with each unit of `used`, so this is the one `used` that gives `charged`, or the larger of two.
 */
export function largestPenalisedUse(charged: bigint, limit: bigint): bigint {
  const charge = (used: bigint) => used + ((limit - used) * PENALTY_PERCENT) / 100n;
  // 0.9 × used + limit / 10 − 1 < charge(used) ≤ 0.9 × used + limit / 10: the answer is `first` or `first` + 1.
  const first = (10n * charged - limit) / 9n;
  if (first < 0n) return 0n;
  return charge(first + 1n) <= charged && first + 1n < limit ? first + 1n : first;
}

/** What one simulation at `callGasLimit` charged for execution (`paid` − preOpGas at 1 wei per gas). */
export interface ExecutionCharge {
  callGasLimit: bigint;
  charged: bigint;
}

/** The no-penalty reading sits within 40,000 of `used`; a penalty takes it 40,000 lower (see executionGasV08). */
const MAX_FURTHER_READINGS = 3;
/** Above the upper bound, so the call has at least what it used; enough to tell the two readings apart (see below). */
const READING_SLACK = 20n;

/**
 * v0.8 and v0.9: the EntryPoint's executionGasUsed, the gas its penalty weighs against callGasLimit (the call and
 * its inner frame, never more than one gas per ten over). `first` was read at a callGasLimit far above the need, so it
 * carries a penalty; `readAt` simulates again at another callGasLimit and returns the new charge.
 *
 * With Y ≥ 0 the post-execution gas, `first` bounds `used` from above (the value it would have if Y were 0). A reading at
 * that bound plus 20 has no penalty when the bound is within 40,000 of `used` (Y below about 36,000: no postOp, or a
 * small one); then first.charged − charged is exactly (first.callGasLimit − used) / 10, rounded down, at least 2 above
 * what a penalised reading gives, which is how the two are told apart. A penalised reading proves `used` lies more than
 * 40,000 below its callGasLimit, and the next reading is taken there. A reading that fits neither (the call behaved
 * otherwise with less gas) ends the search: the bound, which is always safe to give, is returned.
 */
export async function executionGasV08(
  first: ExecutionCharge,
  readAt: (callGasLimit: bigint) => Promise<bigint>,
): Promise<bigint> {
  let upper = largestPenalisedUse(first.charged, first.callGasLimit);
  for (let reading = 0; reading < MAX_FURTHER_READINGS; reading++) {
    const callGasLimit = upper + READING_SLACK;
    const charged = await readAt(callGasLimit);
    const drop = first.charged - charged;
    const penalisedDrop = (first.callGasLimit - callGasLimit) / 10n;
    if (drop >= penalisedDrop + 2n) {
      const used = first.callGasLimit - 10n * drop;
      const consistent = used <= upper && callGasLimit - used <= PENALTY_FREE_GAS + 10n && used <= charged + 10n;
      return consistent ? used : upper;
    }
    if (drop < penalisedDrop) return upper;
    upper = callGasLimit - PENALTY_FREE_GAS - 1n;
    if (upper <= 0n) return 0n;
  }
  return upper;
}
