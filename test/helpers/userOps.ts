/**
 * A v0.6 user operation without initCode or callData, with gas figures the tests' rules accept: the plainest operation
 * to sponsor, for tests that are about the rules around it, not the operation.
 */
export const plainUserOp = (sender: string, nonce: number) => ({
  sender,
  nonce: `0x${nonce.toString(16)}`,
  initCode: "0x",
  callData: "0x",
  callGasLimit: "100000",
  verificationGasLimit: "50000",
  preVerificationGas: "40000",
  maxFeePerGas: "1000000000",
  maxPriorityFeePerGas: "1000000",
});
