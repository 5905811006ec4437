// A v0.6 operation sent to a bundler over its own JSON-RPC API and waited for, as a wallet without an SDK does it:
// eth_sendUserOperation, then eth_getUserOperationReceipt until the bundler has a receipt. The e2e files that drive
// Alto by hand with v0.6 operations share it.
import assert from "node:assert/strict";
import type { Address, Hex } from "viem";
import { ENTRY_POINT_V06_ADDRESS } from "../../src/bindings/entryPoints/entryPoint";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { getUserOpHash } from "../../src/bindings/entryPoints/userOpHash";
import { toRpcUserOperation } from "../../src/gasEstimation/gasEstimationBundler";
import { eventually } from "./eventually";
import { postJsonRpc } from "./postJsonRpc";

/** The parts of eth_getUserOperationReceipt's answer the tests read. */
export interface UserOperationReceipt {
  success: boolean;
  actualGasCost: Hex;
  actualGasUsed: Hex;
  paymaster: Address;
  receipt: { transactionHash: Hex; gasUsed: Hex; status: Hex };
}

/** A bound against a bundler that never mines, not a speed target. */
const RECEIPT_TIMEOUT_MS = 30_000;

/** `method` on the bundler at `url`; fails on a JSON-RPC error, naming the method. */
async function bundlerCall<T>(url: string, method: string, params: unknown[]): Promise<T> {
  const { body } = await postJsonRpc<T>(url, method, params);
  assert.equal(body.error, undefined, `${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

/**
 * Sends `op` for the v0.6 EntryPoint, checks that the bundler names it by our userOpHash on `chainId`, and returns its
 * receipt once mined. `bundlerOutput`, when given, is added to the failure of an operation that is never mined.
 */
export async function sendAndWaitV06(
  url: string,
  op: UserOperation,
  chainId: number,
  bundlerOutput?: () => string,
): Promise<UserOperationReceipt> {
  const userOpHash = await bundlerCall<Hex>(url, "eth_sendUserOperation", [
    toRpcUserOperation(op),
    ENTRY_POINT_V06_ADDRESS,
  ]);
  assert.equal(userOpHash, getUserOpHash(op, ENTRY_POINT_V06_ADDRESS, chainId));
  try {
    const receipt = await eventually(
      `operation ${userOpHash} mined`,
      () => bundlerCall<UserOperationReceipt | null>(url, "eth_getUserOperationReceipt", [userOpHash]),
      Boolean,
      { withinMs: RECEIPT_TIMEOUT_MS, everyMs: 200 },
    );
    return receipt as UserOperationReceipt;
  } catch (error) {
    if (!bundlerOutput) throw error;
    throw new Error(`${(error as Error).message}\n${bundlerOutput()}`, { cause: error });
  }
}
