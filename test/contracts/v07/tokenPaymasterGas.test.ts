// The gas limits the service signs for TokenPaymasterV07, against what it takes on chain (docs/gas-estimation.md,
// 'Paymaster gas limits'), in its costliest case: the price read from the oracle (a cold aggregator) and the first
// charge of a token (the paymaster's token balance written from zero). A fresh account's first ERC20 operation, which
// approves the paymaster in its batch, is mined from the same state with ever smaller limits to find the least that
// work; then with the service's limits and with the least postOp limit, whose difference in actualGasUsed is the
// unused-gas penalty the service's postOp limit made the sender's gas cost.
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEventLogs, type TransactionReceipt } from "viem";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import { PRICE_SOURCE } from "../../../src/bindings/paymasters/tokenPaymasterAndData";
import {
  TOKEN_PAYMASTER_GAS_MARGIN_PERCENT,
  TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
  TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
} from "../../../src/bindings/paymasters/tokenPaymasterAndDataV07";
import type { EntryPointVersion } from "../../../src/devChain/entryPointV07Deployments";
import { leastThatWorks, type PaymasterLimits, postOpPenalty, sameStateEachTime } from "../../helpers/leastGasLimit";
import { handleOpsV07, signByAccountV07 } from "./fixtures";
import {
  approveCall,
  draftOperation,
  newAccount,
  paymasterCalls,
  quote,
  signByService,
  startTokenChainV07,
  TOKENS,
} from "./tokenFixtures";

/**
 * The most unused-gas penalty the service's postOp limit may cost per operation, against the least limit that works:
 * v0.7 charges 10 % of the unused postOp limit (of the 20 % margin and its rounding, about 760 gas on a token's first
 * charge; later charges use less postOp gas and pay more); v0.8 nothing while less than 40,000 gas is unused.
 */
const PENALTY_BOUND_GAS: Record<EntryPointVersion, bigint> = { "0.7": 1_000n, "0.8": 0n };

function operationEvent(receipt: TransactionReceipt) {
  const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event, "a UserOperationEvent");
  return event.args;
}

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: the token paymaster's signed limits are the least that work plus the stated margin, and the postOp penalty stays under ${PENALTY_BOUND_GAS[version]} gas`, async (t) => {
    const env = await startTokenChainV07(version);
    try {
      const account = await newAccount(env, TOKENS(100n));
      const fromStart = await sameStateEachTime(env.publicClient);
      /** The same first operation, mined from the same state each time with `limits`; undefined when it reverted. */
      const tryLimits = (limits: PaymasterLimits) =>
        fromStart(async () => {
          try {
            const draft = await draftOperation(env, account, [approveCall(env, TOKENS(100n))], limits);
            const terms = await quote(env, draft, {
              priceSource: PRICE_SOURCE.oracle,
              oracleAggregator: env.aggregator,
              exchangeRate: 0n,
            });
            const op = await signByAccountV07(env, await signByService(env, draft.op, terms), account.owner);
            const receipt = await handleOpsV07(env, [op], account.address);
            const calls = await paymasterCalls(env, receipt.transactionHash);
            const gasOf = (name: string) => calls.find((call) => call.name === name)?.gasUsed ?? 0n;
            const event = operationEvent(receipt);
            return {
              succeeded: event.success,
              actualGasUsed: event.actualGasUsed,
              validation: gasOf("validatePaymasterUserOp"),
              postOp: gasOf("postOp"),
            };
          } catch {
            return undefined; // handleOps reverted: validation ran out of its limit (AA36) or of gas
          }
        });
      const least = (field: keyof PaymasterLimits, low: bigint, high: bigint, other: PaymasterLimits) =>
        leastThatWorks(low, high, async (value) => (await tryLimits({ ...other, [field]: value }))?.succeeded === true);
      const generous = { paymasterVerificationGasLimit: 150_000n, paymasterPostOpGasLimit: 150_000n };
      const measured = await tryLimits(generous);
      assert.ok(measured?.succeeded, "the operation succeeds with generous limits");
      const leastValidation = await least("paymasterVerificationGasLimit", measured.validation, 150_000n, generous);
      const leastPostOp = await least("paymasterPostOpGasLimit", measured.postOp, 150_000n, generous);
      t.diagnostic(
        `validatePaymasterUserOp used ${measured.validation}, least paymasterVerificationGasLimit ${leastValidation}; ` +
          `postOp used ${measured.postOp}, least paymasterPostOpGasLimit ${leastPostOp}`,
      );
      const signed = {
        paymasterVerificationGasLimit: TOKEN_PAYMASTER_V07_VERIFICATION_GAS_LIMIT,
        paymasterPostOpGasLimit: TOKEN_PAYMASTER_V07_POST_OP_GAS_LIMIT,
      };
      const penalty = await postOpPenalty(tryLimits, signed, leastPostOp, t);
      const withMargin = (gas: bigint) => gas + (gas * TOKEN_PAYMASTER_GAS_MARGIN_PERCENT) / 100n;
      for (const [name, signedLimit, leastLimit] of [
        ["paymasterVerificationGasLimit", signed.paymasterVerificationGasLimit, leastValidation],
        ["paymasterPostOpGasLimit", signed.paymasterPostOpGasLimit, leastPostOp],
      ] as const) {
        // Sufficient with the margin, and tight: one limit serves both EntryPoints, so it may exceed this one's need
        // by the rounding to the thousand and the other's larger need.
        assert.ok(signedLimit >= withMargin(leastLimit), `${name} ${signedLimit} >= ${leastLimit} + margin`);
        assert.ok(signedLimit < withMargin(leastLimit) + 2_000n, `${name} ${signedLimit} within 2,000 of it`);
      }
      assert.ok(penalty >= 0n && penalty <= PENALTY_BOUND_GAS[version], `penalty ${penalty}`);
    } finally {
      await env.anvil.stop();
    }
  });
}
