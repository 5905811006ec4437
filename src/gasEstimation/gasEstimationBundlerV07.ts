// eth_estimateUserOperationGas for an EntryPoint v0.7 or v0.8 operation: the same bundler call as v0.6's
// (gasEstimationBundler.ts), with the operation in its unpacked v0.7 request shape.
import type { Address } from "viem";
import { toRpcUserOperationV07, type UserOperationV07 } from "../bindings/entryPoints/userOperationV07";
import { quantity, request } from "./gasEstimationBundler";
import { EstimationUnavailableError } from "./gasEstimationErrors";

export interface BundlerGasV07 {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  /** What the bundler measured for the paymaster's validation, when it says. */
  paymasterVerificationGasLimit?: bigint;
}

/** The account's three limits with the bundler's margins; the operation carries our stub paymaster fields. */
export async function estimateWithBundlerV07(
  url: string,
  entryPoint: Address,
  op: UserOperationV07,
): Promise<BundlerGasV07> {
  const result = await request(url, "eth_estimateUserOperationGas", [toRpcUserOperationV07(op), entryPoint]);
  if (typeof result !== "object" || result === null) {
    throw new EstimationUnavailableError("the bundler answered eth_estimateUserOperationGas without an object");
  }
  const fields = result as Record<string, unknown>;
  const paymasterVerification = fields.paymasterVerificationGasLimit;
  return {
    callGasLimit: quantity(fields.callGasLimit, "callGasLimit"),
    verificationGasLimit: quantity(fields.verificationGasLimit, "verificationGasLimit"),
    preVerificationGas: quantity(fields.preVerificationGas, "preVerificationGas"),
    ...(paymasterVerification === undefined || paymasterVerification === null
      ? {}
      : { paymasterVerificationGasLimit: quantity(paymasterVerification, "paymasterVerificationGasLimit") }),
  };
}
