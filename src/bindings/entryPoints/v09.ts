// EntryPoint v0.9 for the sponsorship engine. Its operation, packing, prefund and EIP-712 user operation hash are
// v0.8's, so the sequential path (our signature inside paymasterData over the paymaster's own hash) is v07.ts's as it
// is. What v0.9 adds is the paymaster signature apart from paymasterData (entryPointV09.ts), which the user operation
// hash leaves out: our v0.9 paymasters accept a signature over the user operation hash there (parallel signing).
import { ENTRY_POINT_V09_ADDRESS } from "./entryPointV09";
import type { EntryPointVersion } from "./entryPointVersion";
import { entryPointV07, type SignableUserOperationV07 } from "./v07";

export const entryPointV09: EntryPointVersion<SignableUserOperationV07> = {
  ...entryPointV07("0.9", ENTRY_POINT_V09_ADDRESS, true),
  signsInParallel: true,
  readsBlockWindows: true,
};
