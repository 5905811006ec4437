// The gas limits the service signs for VerifyingPaymasterV07, against what it takes on chain (docs/gas-estimation.md,
// 'Paymaster gas limits'). A fresh account's first sponsored operation is mined on EntryPoint v0.7 and v0.8 with the
// service's limits; anvil's call tracer gives what validatePaymasterUserOp and postOp used. The same operation is then
// mined again from the same state with its postOp limit at exactly what postOp used: the difference in the
// EntryPoint's actualGasUsed is the unused-gas penalty the service's postOp limit made the dApp pay.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { toSimpleSmartAccount } from "permissionless/accounts";
import { BaseError, ContractFunctionRevertedError, type Hex, parseEventLogs } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { entryPointV07Abi } from "../../../src/bindings/entryPoints/entryPointV07";
import {
  PAYMASTER_GAS_MARGIN_PERCENT,
  PAYMASTER_POST_OP_GAS_LIMIT_V07,
  PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
  paymasterGasLimitsV07,
} from "../../../src/bindings/paymasters/verifyingPaymasterGasV07";
import type { LaterEntryPointVersion } from "../../../src/config";
import { leastThatWorks, type PaymasterLimits, postOpPenalty, sameStateEachTime } from "../../helpers/leastGasLimit";
import { paymasterHookGas } from "../../helpers/paymasterHookGas";
import { anvilKeys } from "../fixtures";
import { checkSponsored, confirm, type LocalStacks, prepareSponsored, startLocalStacks } from "./localStacks";

/**
 * The most unused-gas penalty the service's postOp limit may cost a dApp per operation, against the least limit that
 * works. v0.7 charges 10 % of the unused postOp limit: 10 % of the 20 % margin and its rounding, about 160 gas. v0.8
 * charges nothing while less than 40,000 gas is unused.
 */
const PENALTY_BOUND_GAS: Record<Exclude<LaterEntryPointVersion, "0.9">, bigint> = { "0.7": 200n, "0.8": 0n };

let env: LocalStacks;

before(async () => {
  env = await startLocalStacks();
});
after(() => env?.stop());

/** One first operation of `owner`'s account, mined by anvil's bundler account with the given paymaster limits. */
async function mine(
  version: LaterEntryPointVersion,
  ownerKey: Hex,
  paymasterGas: ReturnType<typeof paymasterGasLimitsV07>,
) {
  const account = await toSimpleSmartAccount({
    client: env.publicClient,
    owner: privateKeyToAccount(ownerKey),
    entryPoint: { address: env.chain.info.entryPoints[version].entryPoint, version },
  });
  const prepared = await prepareSponsored(env, version, account, { paymasterGas });
  const receipt = await confirm(
    env,
    env.wallet(anvilKeys.bundler).writeContract({
      address: env.chain.info.entryPoints[version].entryPoint,
      abi: entryPointV07Abi,
      functionName: "handleOps",
      args: [[prepared.packed], privateKeyToAccount(anvilKeys.bundler).address],
    }),
  );
  const paymaster = env.chain.info.entryPoints[version].verifyingPaymaster;
  const gas = await paymasterHookGas(env.publicClient, receipt.transactionHash, paymaster);
  const [event] = parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event);
  if (!event.args.success) return { succeeded: false as const, gas };
  return { succeeded: true as const, ...(await checkSponsored(env, version, prepared, receipt.logs)), gas };
}

for (const version of ["0.7", "0.8"] as const) {
  test(`EntryPoint v${version}: the signed limits are the least that work plus the stated margin, and the postOp penalty stays under ${PENALTY_BOUND_GAS[version]} gas`, async (t) => {
    const ownerKey = generatePrivateKey();
    const fromStart = await sameStateEachTime(env.publicClient);
    /** The same first operation, mined from the same state each time with `limits`; undefined when it reverted. */
    const tryLimits = (limits: PaymasterLimits) =>
      fromStart(async () => {
        try {
          return await mine(version, ownerKey, limits);
        } catch (error) {
          // handleOps reverted: validation ran out of its limit (AA36) or of gas. Anything else (a node that did not
          // answer) is no measure of the limit, and would move the search: it fails the test with what happened.
          if (error instanceof BaseError && error.walk((cause) => cause instanceof ContractFunctionRevertedError)) {
            return undefined;
          }
          throw error;
        }
      });
    /** The least value of `field` (to 100 gas) with which the operation succeeds, the other limit at `other`. */
    const least = (field: keyof PaymasterLimits, low: bigint, high: bigint, other: PaymasterLimits) =>
      leastThatWorks(low, high, async (value) => (await tryLimits({ ...other, [field]: value }))?.succeeded === true);
    const generous = { paymasterVerificationGasLimit: 100_000n, paymasterPostOpGasLimit: 60_000n };
    const measured = await tryLimits(generous);
    assert.ok(measured?.succeeded, "the operation succeeds with generous limits");
    const leastValidation = await least("paymasterVerificationGasLimit", measured.gas.validation, 100_000n, generous);
    const leastPostOp = await least("paymasterPostOpGasLimit", measured.gas.postOp, 60_000n, generous);

    t.diagnostic(
      `validatePaymasterUserOp used ${measured.gas.validation}, least paymasterVerificationGasLimit ` +
        `${leastValidation}; postOp used ${measured.gas.postOp}, least paymasterPostOpGasLimit ${leastPostOp}`,
    );
    const signed = paymasterGasLimitsV07({});
    const penalty = await postOpPenalty(tryLimits, signed, leastPostOp, t);
    // Leaves the chain as this version's measure found it, for the next.
    await fromStart(async () => undefined);
    const withMargin = (gas: bigint) => gas + (gas * PAYMASTER_GAS_MARGIN_PERCENT) / 100n;
    for (const [name, signedLimit, leastLimit] of [
      ["paymasterVerificationGasLimit", PAYMASTER_VERIFICATION_GAS_LIMIT_V07, leastValidation],
      ["paymasterPostOpGasLimit", PAYMASTER_POST_OP_GAS_LIMIT_V07, leastPostOp],
    ] as const) {
      // Sufficient with the margin, and tight: one limit serves both EntryPoints, so it may exceed this one's need by
      // the rounding to the thousand and the other's larger need (v0.7's validation takes 632 gas more than v0.8's).
      assert.ok(signedLimit >= withMargin(leastLimit), `${name} ${signedLimit} >= ${leastLimit} + margin`);
      assert.ok(signedLimit < withMargin(leastLimit) + 2_000n, `${name} ${signedLimit} within 2,000 of it`);
    }
    assert.ok(
      penalty >= 0n && penalty <= PENALTY_BOUND_GAS[version],
      `penalty ${penalty} <= ${PENALTY_BOUND_GAS[version]}`,
    );
  });
}
