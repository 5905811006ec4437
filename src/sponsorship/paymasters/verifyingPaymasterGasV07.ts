// The gas limits the service signs for VerifyingPaymasterV07 (EntryPoint v0.7 and v0.8). The EntryPoint gives the
// paymaster's validation and its postOp exactly these limits, read from paymasterAndData, and our signature covers
// them: a wallet cannot estimate them (it does not know our contract), so we answer them with every sponsorship.
//
// Measured on anvil against both EntryPoints (docs/contracts.md, 'What a dApp is charged'): validation of a first
// operation, cold storage and ecrecover included, failed at 25,000 and passed at 30,000; postOp (decode the context,
// write one balance, emit one event) ran out at 3,000 and completed at 5,000. The limits below leave a wide margin for
// validation, whose unused gas costs nobody anything, and a modest one for postOp, since the EntryPoint charges 10 % of
// the unused postOp limit (and the contract passes that on to the dApp).

/** paymasterVerificationGasLimit: 30,000 measured, signed with two thirds on top. */
export const PAYMASTER_VERIFICATION_GAS_LIMIT_V07 = 50_000n;

/** paymasterPostOpGasLimit: 5,000 measured, signed at three times that; 10 % of what is unused costs the dApp ~1,000 gas. */
export const PAYMASTER_POST_OP_GAS_LIMIT_V07 = 15_000n;

/**
 * The limits we sign. Validation: the larger of what the client (or its bundler's estimate) put in and our figure, since
 * unused validation gas costs nobody anything and a bundler may know its chain better. postOp: always ours, since 10 %
 * of an inflated postOp limit would be charged to the dApp.
 */
export function paymasterGasLimitsV07(given: { paymasterVerificationGasLimit?: bigint }): {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
} {
  const verification = given.paymasterVerificationGasLimit;
  return {
    paymasterVerificationGasLimit:
      verification !== undefined && verification > PAYMASTER_VERIFICATION_GAS_LIMIT_V07
        ? verification
        : PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
    paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_LIMIT_V07,
  };
}
