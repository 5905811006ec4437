// Finding the least gas limit with which an operation still works on chain: the same operation mined from the same
// chain state (anvil's snapshot, taken again after each revert, which consumes it) with ever smaller values, halving
// the interval down to 100 gas. The gas-limit tests of our paymasters sign their limits against what this finds, and
// weigh the unused-gas penalty of the postOp limit they sign against it.
//
//   const fromStart = await sameStateEachTime(env.publicClient);
//   const least = await leastThatWorks(used, 150_000n, async (limit) => (await fromStart(() => run(limit))).ok);
import assert from "node:assert/strict";
import type { Hex, PublicClient } from "viem";

type Request = (args: { method: string; params: unknown[] }) => Promise<Hex>;

/** Runs each `work` from the chain state as it is now; what a run mined is undone before the next. */
export async function sameStateEachTime(
  client: Pick<PublicClient, "request">,
): Promise<<T>(work: () => Promise<T>) => Promise<T>> {
  const request = client.request as unknown as Request;
  let state = await request({ method: "evm_snapshot", params: [] });
  return async (work) => {
    await request({ method: "evm_revert", params: [state] });
    state = await request({ method: "evm_snapshot", params: [] });
    return work();
  };
}

/** The least value in (low, high] for which `works` holds, to within 100; `high` must work. */
export async function leastThatWorks(
  low: bigint,
  high: bigint,
  works: (value: bigint) => Promise<boolean>,
): Promise<bigint> {
  let [bottom, top] = [low, high];
  while (top - bottom > 100n) {
    const middle = (bottom + top) / 2n;
    if (await works(middle)) top = middle;
    else bottom = middle;
  }
  return top;
}

/** A paymaster's two gas limits, as signed in its paymasterAndData. */
export interface PaymasterLimits {
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
}

/**
 * The unused-gas penalty the `signed` postOp limit makes a dApp pay: the operation's actualGasUsed with `signed` less
 * than with the least postOp limit that works (both mined from the same state by `tryLimits`, and both must succeed).
 */
export async function postOpPenalty(
  tryLimits: (limits: PaymasterLimits) => Promise<{ succeeded: boolean; actualGasUsed?: bigint } | undefined>,
  signed: PaymasterLimits,
  leastPostOp: bigint,
  t: { diagnostic(message: string): void },
): Promise<bigint> {
  const gasUsedWith = async (limits: PaymasterLimits, what: string) => {
    const outcome = await tryLimits(limits);
    assert.ok(outcome?.succeeded && outcome.actualGasUsed !== undefined, `the operation succeeds with ${what}`);
    return outcome.actualGasUsed;
  };
  const withOurs = await gasUsedWith(signed, "the service's limits");
  const withLeast = await gasUsedWith({ ...signed, paymasterPostOpGasLimit: leastPostOp }, "the least postOp limit");
  const penalty = withOurs - withLeast;
  t.diagnostic(
    `signed ${signed.paymasterVerificationGasLimit} and ${signed.paymasterPostOpGasLimit}: actualGasUsed ` +
      `${withOurs}, ${withLeast} with the least postOp limit: penalty ${penalty} gas`,
  );
  return penalty;
}
