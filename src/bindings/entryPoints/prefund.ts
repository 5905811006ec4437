// The most an operation can cost, per EntryPoint version: the prefund the EntryPoint takes from a paymaster's deposit
// before validation, and what our verifying paymaster can take from a dApp's deposit on top of it. Plain gas
// arithmetic, so that the version files, the rules and the deposit reads share one definition.

/**
 * The most an operation can cost in wei (docs/sponsorship-rpc.md, 'Sponsorship rules', rule 7): what a NATIVE_ASSET
 * limit reserves.
 */
export function worstCaseCostWei(gas: {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (gas.callGasLimit + 3n * gas.verificationGasLimit + gas.preVerificationGas) * gas.maxFeePerGas;
}

/**
 * The most a v0.7 or v0.8 operation can cost in wei: exactly the prefund the EntryPoint takes from the paymaster's
 * deposit before validation (its _getRequiredPrefund). The paymaster's limits are their own fields there, where v0.6
 * counted the verification limit three times to cover the paymaster's validation and postOp.
 */
export function worstCaseCostWeiV07(gas: {
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (
    (gas.verificationGasLimit +
      gas.callGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.preVerificationGas) *
    gas.maxFeePerGas
  );
}

/**
 * VerifyingPaymaster.POST_OP_OVERHEAD_GAS: gas the contract charges on top of the EntryPoint's cost, reserved at
 * maxFeePerGas in validation. test/chain checks it against the deployed contract.
 */
export const POST_OP_OVERHEAD_GAS = 12_000n;

/**
 * What the contract takes from the dApp's balance in validation (and gives back the unused part of in postOp):
 * the EntryPoint's maxCost for an operation with a paymaster, (callGasLimit + 3 × verificationGasLimit +
 * preVerificationGas) × maxFeePerGas, plus the overhead at maxFeePerGas. An operation the balance cannot cover fails
 * validation on chain, so this is the most a signature can ever cost the deposit.
 */
export function maxChargeWei(op: {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (
    (op.callGasLimit + 3n * op.verificationGasLimit + op.preVerificationGas + POST_OP_OVERHEAD_GAS) * op.maxFeePerGas
  );
}
