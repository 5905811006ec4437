// EntryPoint v0.7 and v0.8 for the sponsorship engine: the unpacked operation (factory, the paymaster's two gas limits
// beside the account's), packed for the hashes; our paymaster's part is paymaster + its two limits + paymasterData.
// The two versions differ only in the user operation hash (v0.8's is EIP-712, and reads EIP-7702 authorizations).
import type { Address } from "viem";
import type { PartialUserOperationV07 } from "../../sponsorship/partialUserOperationV07";
import type { PaymasterGasLimits } from "../paymasters/paymasterAndDataV07";
import type { EntryPointVersion } from "./entryPointVersion";
import { paymasterHashPrefixWords } from "./packedUserOperation";
import { worstCaseCostWeiV07 } from "./prefund";
import { type EntryPointVersionV07, getUserOpHashV07, packUserOperation } from "./userOperationV07";

/** A v0.7/v0.8 operation with every field our signature covers, the paymaster's two gas limits included. */
export type SignableUserOperationV07 = PartialUserOperationV07 &
  PaymasterGasLimits &
  Required<
    Pick<
      PartialUserOperationV07,
      "callGasLimit" | "verificationGasLimit" | "preVerificationGas" | "maxFeePerGas" | "maxPriorityFeePerGas"
    >
  >;

const paymasterGasOf = (op: SignableUserOperationV07): PaymasterGasLimits => ({
  paymasterVerificationGasLimit: op.paymasterVerificationGasLimit,
  paymasterPostOpGasLimit: op.paymasterPostOpGasLimit,
});

/** The two later EntryPoints, one implementation with the version as its parameter (registered in versions.ts). */
export function entryPointV07(
  name: EntryPointVersionV07,
  canonicalAddress: Address,
): EntryPointVersion<SignableUserOperationV07> {
  return {
    name,
    canonicalAddress,
    paymasterGasOf,
    paymasterHashPrefix: (op, place) =>
      paymasterHashPrefixWords(packUserOperation({ ...op, signature: "0x" }), { ...paymasterGasOf(op), ...place }),
    userOpHash: (op, part, entryPoint, chainId) =>
      getUserOpHashV07({ ...op, ...paymasterGasOf(op), ...part, signature: "0x" }, entryPoint, chainId, name),
    prefundWei: worstCaseCostWeiV07,
    prefundCountsPostOp: true,
    // The prefund already holds the postOp's own limit: it is all the deposit can lose.
    maxDepositChargeWei: worstCaseCostWeiV07,
    signsInParallel: false,
    readsBlockWindows: false,
  };
}
