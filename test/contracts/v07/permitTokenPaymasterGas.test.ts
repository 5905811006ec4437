// The gas limits the service signs for PermitTokenPaymasterV07, against what it takes on chain, in its costliest case:
// a fresh ERC-1271 account's first operation (deployed by initCode) carrying its permit, the price read from the oracle
// (a cold aggregator) and the token's first charge (the paymaster's balance written from zero). The same operation is
// mined from the same state with ever smaller limits to find the least that work. The signed limits must cover them with
// the stated margin, and the least postOp limit must stay below the service's floor for it, which refuses a postOp that
// could run out of gas (the execution would be undone while the whole prefund stays with the paymaster).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  PERMIT_TOKEN_PAYMASTER_GAS_MARGIN_PERCENT,
  PERMIT_TOKEN_PAYMASTER_MIN_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
  PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
} from "../../../src/bindings/paymasters/permitTokenPaymasterAndData";
import { PRICE_SOURCE } from "../../../src/bindings/paymasters/tokenPaymasterAndData";
import { leastThatWorks, sameStateEachTime } from "../../helpers/leastGasLimit";
import { paymasterHookGas } from "../../helpers/paymasterHookGas";
import {
  draftOperation,
  erc1271Sender,
  eventsOf,
  executeCall,
  handleOps,
  maxCharge,
  RATE,
  signOperation,
  signPermit,
  startPermitTokenChain,
  TOKENS,
  terms,
} from "./permitTokenFixtures";

type Limits = { paymasterVerificationGasLimit: bigint; paymasterPostOpGasLimit: bigint };

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: the up-front token paymaster's signed limits are the least that work plus the stated margin`, async (t) => {
    const env = await startPermitTokenChain(version);
    try {
      const sender = await erc1271Sender(env, TOKENS(100n));
      const fromStart = await sameStateEachTime(env.publicClient);
      /** The same first operation, mined from the same state each time with `limits`; undefined when it failed. */
      const tryLimits = (limits: Limits) =>
        fromStart(async () => {
          try {
            const draft = await draftOperation(env, sender, executeCall(sender.address), limits);
            const permit = await signPermit(env, sender, maxCharge(draft));
            const quote = await terms(env, {
              permit,
              priceSource: PRICE_SOURCE.oracle,
              oracleAggregator: env.aggregator,
              exchangeRate: 0n,
            });
            const receipt = await handleOps(env, [await signOperation(env, sender, draft, quote)], [sender]);
            const [operation] = eventsOf(receipt).operations;
            // A postOp that ran out of gas is no TokenCharged: the EntryPoint reverted the execution and kept the gas.
            const charged = eventsOf(receipt).charged.length === 1;
            const gas = await paymasterHookGas(env.publicClient, receipt.transactionHash, env.paymaster);
            return { succeeded: operation?.args.success === true && charged, ...gas };
          } catch {
            return undefined; // handleOps reverted: validation ran out of its limit or of gas
          }
        });
      const least = (field: keyof Limits, low: bigint, high: bigint, other: Limits) =>
        leastThatWorks(low, high, async (value) => (await tryLimits({ ...other, [field]: value }))?.succeeded === true);
      const generous = { paymasterVerificationGasLimit: 250_000n, paymasterPostOpGasLimit: 150_000n };
      const measured = await tryLimits(generous);
      assert.ok(measured?.succeeded, "the operation succeeds with generous limits");
      const leastValidation = await least("paymasterVerificationGasLimit", measured.validation, 250_000n, generous);
      const leastPostOp = await least("paymasterPostOpGasLimit", measured.postOp, 150_000n, generous);
      t.diagnostic(
        `validatePaymasterUserOp used ${measured.validation}, least paymasterVerificationGasLimit ${leastValidation}; ` +
          `postOp used ${measured.postOp}, least paymasterPostOpGasLimit ${leastPostOp}`,
      );
      const withMargin = (gas: bigint) => gas + (gas * PERMIT_TOKEN_PAYMASTER_GAS_MARGIN_PERCENT) / 100n;
      assert.ok(PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT >= withMargin(leastValidation));
      assert.ok(PERMIT_TOKEN_PAYMASTER_MIN_POST_OP_GAS_LIMIT >= withMargin(leastPostOp));
      assert.ok(PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT >= PERMIT_TOKEN_PAYMASTER_MIN_POST_OP_GAS_LIMIT);
      const signed = await tryLimits({
        paymasterVerificationGasLimit: PERMIT_TOKEN_PAYMASTER_VERIFICATION_GAS_LIMIT,
        paymasterPostOpGasLimit: PERMIT_TOKEN_PAYMASTER_POST_OP_GAS_LIMIT,
      });
      assert.ok(signed?.succeeded, "the operation succeeds with the service's limits");
    } finally {
      await env.anvil.stop();
    }
  });
}

// A bundler that estimates at 1 wei per gas (Alto) sees the prefund and the charge both round up to one base unit, so
// postOp refunds nothing there; it then sizes paymasterPostOpGasLimit from that run. postOp must cost the same with a
// refund of zero as with a real one, or the operation sent at real fees runs out of postOp gas (AA50).
test("EntryPoint v0.7: the up-front token paymaster's postOp costs the same gas with a refund of zero", async () => {
  const env = await startPermitTokenChain("0.7");
  try {
    const sender = await erc1271Sender(env, TOKENS(100n));
    const fromStart = await sameStateEachTime(env.publicClient);
    const postOpAt = (exchangeRate: bigint) =>
      fromStart(async () => {
        const draft = await draftOperation(env, sender, executeCall(sender.address));
        const permit = await signPermit(env, sender, maxCharge(draft));
        const quote = await terms(env, { permit, exchangeRate });
        const receipt = await handleOps(env, [await signOperation(env, sender, draft, quote)], [sender]);
        const [charged] = eventsOf(receipt).charged;
        assert.ok(charged, "the operation was charged");
        const gas = await paymasterHookGas(env.publicClient, receipt.transactionHash, env.paymaster);
        return { refund: charged.refund, postOp: gas.postOp };
      });
    // One base unit per 1e18 wei: the prefund and the charge are both one base unit.
    const zero = await postOpAt(1n);
    const refunded = await postOpAt(RATE);
    assert.equal(zero.refund, 0n);
    assert.ok(refunded.refund > 0n);
    const difference = zero.postOp > refunded.postOp ? zero.postOp - refunded.postOp : refunded.postOp - zero.postOp;
    assert.ok(
      difference <= 100n,
      `postOp used ${zero.postOp} gas with a refund of zero and ${refunded.postOp} with a refund`,
    );
  } finally {
    await env.anvil.stop();
  }
});
