import assert from "node:assert/strict";
import { type Address, decodeFunctionData, type Hex, isAddressEqual, type PublicClient } from "viem";
import { verifyingPaymasterV07Artifact } from "../../src/bindings/paymasters/artifacts";

interface CallFrame {
  to?: string;
  input: string;
  gasUsed: Hex;
  calls?: CallFrame[];
}

/**
 * Gas used by each of `paymaster`'s hooks in the bundle transaction, from anvil's geth-style call tracer; both must
 * have run. Any of our paymasters: the two hooks are IPaymaster's, the same selectors in every paymaster's ABI.
 */
export async function paymasterHookGas(
  client: Pick<PublicClient, "request">,
  transactionHash: Hex,
  paymaster: Address,
): Promise<{ validation: bigint; postOp: bigint }> {
  const request = client.request as unknown as (args: { method: string; params: unknown[] }) => Promise<CallFrame>;
  const root = await request({ method: "debug_traceTransaction", params: [transactionHash, { tracer: "callTracer" }] });
  const used: Record<string, bigint> = {};
  const walk = (frame: CallFrame) => {
    if (frame.to && isAddressEqual(frame.to as Address, paymaster)) {
      const { functionName } = decodeFunctionData({ abi: verifyingPaymasterV07Artifact.abi, data: frame.input as Hex });
      used[functionName] = BigInt(frame.gasUsed);
    }
    for (const child of frame.calls ?? []) walk(child);
  };
  walk(root);
  const { validatePaymasterUserOp: validation, postOp } = used;
  assert.ok(validation !== undefined && postOp !== undefined, "both hooks ran");
  return { validation, postOp };
}
