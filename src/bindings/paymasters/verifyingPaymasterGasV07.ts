// The gas limits the service signs for VerifyingPaymasterV07 (EntryPoint v0.7 and v0.8). The EntryPoint gives the
// paymaster's validation and its postOp exactly these limits, read from paymasterAndData, and our signature covers
// them: a wallet cannot estimate them (it does not know our contract), so we answer them with every sponsorship.
//
// Measured on anvil against EntryPoint 0.7.0 and 0.8.0 after the signer-set conversion, for a fresh account's first
// operation (every slot cold), by mining it with ever smaller limits (test/contracts/v07/paymasterGas.test.ts): the
// least paymasterVerificationGasLimit that passes is 29,454 on v0.7 and 28,822 on v0.8 (the EntryPoint counts its own
// work around the call, the deposit's prefund among it, against this limit: validatePaymasterUserOp itself used 19,106),
// and the least paymasterPostOpGasLimit 4,451 on both (postOp used 4,124). Each limit is the larger figure plus
// PAYMASTER_GAS_MARGIN_PERCENT, rounded up to the thousand; the test measures again and fails when a limit no longer
// covers its figure with the margin, or exceeds it by more than the rounding. The postOp margin is what a dApp pays
// for: EntryPoint v0.7 charges 10 % of the unused postOp limit (155 gas measured), v0.8 nothing below 40,000 unused.

/** What each limit keeps above the least that works, in percent: the contract's gas does not vary between operations. */
export const PAYMASTER_GAS_MARGIN_PERCENT = 20n;

/** paymasterVerificationGasLimit: 29,454 the least that works, +20 %, to the thousand. */
export const PAYMASTER_VERIFICATION_GAS_LIMIT_V07 = 36_000n;

/** paymasterPostOpGasLimit: 4,451 the least that works, +20 %, to the thousand. */
export const PAYMASTER_POST_OP_GAS_LIMIT_V07 = 6_000n;

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
