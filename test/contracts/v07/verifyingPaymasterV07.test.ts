// VerifyingPaymasterV07 against the real EntryPoint v0.7 and v0.8 (npm 0.7.0 and 0.8.0, at their canonical addresses)
// on anvil, with operations built and signed by the service's own encoder and signer. Each version gets its own chain;
// each test runs from the same snapshot, so none sees another's deposits.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type Address,
  decodeErrorResult,
  encodeFunctionData,
  type Hex,
  isAddressEqual,
  parseAbi,
  parseEther,
  parseEventLogs,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import {
  ENTRY_POINT_V07_ADDRESS,
  ENTRY_POINT_V08_ADDRESS,
  entryPointV07Abi,
} from "../../../src/bindings/entryPoints/entryPointV07";
import type { PackedUserOperation } from "../../../src/bindings/entryPoints/packedUserOperation";
import { verifyingPaymasterV07Artifact } from "../../../src/bindings/paymasters/artifacts";
import {
  decodeVerifyingPaymasterAndDataV07,
  encodeVerifyingPaymasterAndDataV07,
  getVerifyingPaymasterHashV07,
} from "../../../src/bindings/paymasters/paymasterAndDataV07";
import type { EntryPointVersion } from "../../../src/devChain/entryPointV07Deployments";
import { createSigner } from "../../../src/signer/signer";
import { freshAddress, randomBigInt, randomHex, randomPackedOperation } from "../../helpers/randomPackedOperation";
import { revertEachTest } from "../../helpers/revertEachTest";
import { anvilKeys, latestTimestamp } from "../fixtures";
import {
  type DraftV07,
  failedOpOfV07,
  gasLimitsV07,
  handleOpsV07,
  maxCostOf,
  newAccountOperationV07,
  type SponsoredV07,
  type SponsorOptionsV07,
  signByAccountV07,
  sponsorV07,
  startSponsoredChainV07,
} from "./fixtures";

const AA34 = "AA34 signature error";
const AA32 = "AA32 paymaster expired or not due";
const AA33 = "AA33 reverted";
const fundingWallet = privateKeyToAccount(anvilKeys.fundingWallet).address;
const otherFundingWallet = privateKeyToAccount(anvilKeys.otherFundingWallet).address;
const canonical: Record<EntryPointVersion, Address> = {
  "0.7": ENTRY_POINT_V07_ADDRESS,
  "0.8": ENTRY_POINT_V08_ADDRESS,
};
/** A contract whose every call reverts: the user's call fails and postOp runs in opReverted mode. */
const revertingCallData = encodeFunctionData({
  abi: parseAbi(["function nonexistent()"]),
  functionName: "nonexistent",
});

for (const version of ["0.7", "0.8"] as const) {
  describe(`VerifyingPaymasterV07 on EntryPoint v${version}`, () => {
    let env: SponsoredV07;
    let overheadGas: bigint;

    before(async () => {
      // Not anvil's default 31337, so a chain id the contract took from anywhere but block.chainid would show.
      env = await startSponsoredChainV07(version, { chainId: 4337 });
      assert.equal(env.entryPoint, canonical[version]);
      overheadGas = await env.publicClient.readContract({ ...paymaster(), functionName: "POST_OP_OVERHEAD_GAS" });
    });
    after(() => env?.anvil.stop());
    revertEachTest(() => env.testClient);

    function paymaster() {
      return { address: env.paymaster, abi: verifyingPaymasterV07Artifact.abi } as const;
    }
    function balanceOf(paymasterId: Address): Promise<bigint> {
      return env.publicClient.readContract({ ...paymaster(), functionName: "getBalance", args: [paymasterId] });
    }
    function entryPointDeposit(): Promise<bigint> {
      return env.publicClient.readContract({
        address: env.entryPoint,
        abi: entryPointV07Abi,
        functionName: "balanceOf",
        args: [env.paymaster],
      });
    }
    async function depositFor(paymasterId: Address, value: bigint) {
      const hash = await env
        .wallet(anvilKeys.fundingWallet)
        .writeContract({ ...paymaster(), functionName: "depositFor", args: [paymasterId], value });
      return env.publicClient.waitForTransactionReceipt({ hash });
    }
    /** Terms the service would give: valid from a minute ago to five minutes ahead of the chain's clock. */
    async function terms(overrides: Partial<SponsorOptionsV07> = {}): Promise<SponsorOptionsV07> {
      const now = await latestTimestamp(env);
      return {
        paymaster: env.paymaster,
        paymasterId: fundingWallet,
        signer: env.serviceSigner,
        validUntil: now + 300,
        validAfter: now - 60,
        chainId: env.anvil.chainId,
        paymasterVerificationGasLimit: gasLimitsV07.paymasterVerificationGasLimit,
        paymasterPostOpGasLimit: gasLimitsV07.paymasterPostOpGasLimit,
        ...overrides,
      };
    }
    async function sponsored(
      draft: DraftV07,
      overrides: Partial<SponsorOptionsV07> = {},
    ): Promise<PackedUserOperation> {
      return signByAccountV07(env, await sponsorV07(draft.op, await terms(overrides)), draft.owner);
    }
    /** Runs one operation and returns what the EntryPoint and the paymaster reported about it. */
    async function run(op: PackedUserOperation) {
      const beneficiary = freshAddress();
      const receipt = await handleOpsV07(env, [op], beneficiary);
      assert.equal(receipt.status, "success");
      const [userOpEvent] = parseEventLogs({
        abi: entryPointV07Abi,
        logs: receipt.logs,
        eventName: "UserOperationEvent",
      });
      assert.ok(userOpEvent, "no UserOperationEvent");
      const charged = parseEventLogs({ abi: paymaster().abi, logs: receipt.logs, eventName: "GasCharged" });
      return {
        receipt,
        userOpEvent: userOpEvent.args,
        charged,
        beneficiaryBalance: await env.publicClient.getBalance({ address: beneficiary }),
      };
    }
    /** The money rule: the shared EntryPoint deposit always covers every dApp's balance. */
    async function assertDepositCoversBalances() {
      const balances = (await balanceOf(fundingWallet)) + (await balanceOf(otherFundingWallet));
      assert.ok((await entryPointDeposit()) >= balances, "EntryPoint deposit below the sum of the dApps' balances");
    }

    test("our hash is the contract's getHash for random operations and terms", async () => {
      for (let i = 0; i < 8; i++) {
        const op = randomPackedOperation(i);
        const context = {
          paymaster: env.paymaster,
          chainId: env.anvil.chainId,
          paymasterId: freshAddress(),
          validUntil: Number(randomBigInt(6)),
          validAfter: Number(randomBigInt(6)),
          paymasterVerificationGasLimit: randomBigInt(16),
          paymasterPostOpGasLimit: randomBigInt(16),
        };
        const signature = randomHex(65);
        const paymasterAndData = encodeVerifyingPaymasterAndDataV07({ ...context, signature });
        const { chainId: _chainId, ...laidOut } = context;
        assert.deepEqual(decodeVerifyingPaymasterAndDataV07(paymasterAndData), { ...laidOut, signature });
        const onChain = await env.publicClient.readContract({
          ...paymaster(),
          functionName: "getHash",
          args: [{ ...op, paymasterAndData }, context.paymasterId, context.validUntil, context.validAfter],
        });
        assert.equal(getVerifyingPaymasterHashV07(op, context), onChain, `operation ${i}`);
        const parsed = await env.publicClient.readContract({
          ...paymaster(),
          functionName: "parsePaymasterAndData",
          args: [paymasterAndData],
        });
        assert.deepEqual(parsed.slice(0, 3), [context.paymasterId, context.validUntil, context.validAfter]);
      }
    });

    test("a sponsored operation deploys the account, runs its call, pays the bundler and is charged to the dApp", async (t) => {
      await depositFor(fundingWallet, parseEther("1"));
      await depositFor(otherFundingWallet, parseEther("1"));
      const recipient = freshAddress();
      const draft = await newAccountOperationV07(env, { to: recipient, value: 0n });
      const depositBefore = await entryPointDeposit();

      const { userOpEvent, charged, beneficiaryBalance } = await run(await sponsored(draft));

      assert.equal(userOpEvent.success, true);
      assert.ok(isAddressEqual(userOpEvent.paymaster, env.paymaster));
      assert.ok(isAddressEqual(userOpEvent.sender, draft.op.sender));
      assert.notEqual(await env.publicClient.getCode({ address: draft.op.sender }), undefined);
      // The EntryPoint took the operation's cost from our deposit and paid it to the bundler's beneficiary.
      assert.equal(depositBefore - (await entryPointDeposit()), userOpEvent.actualGasCost);
      assert.equal(beneficiaryBalance, userOpEvent.actualGasCost);
      // The dApp pays at least what the EntryPoint took, and no more than the overhead and penalty bound above it.
      assert.equal(charged.length, 1);
      const charge = charged[0]?.args.charge ?? 0n;
      assert.ok(isAddressEqual(charged[0]?.args.paymasterId ?? "0x", fundingWallet));
      assert.equal(await balanceOf(fundingWallet), parseEther("1") - charge);
      assert.equal(await balanceOf(otherFundingWallet), parseEther("1"), "another dApp's balance moved");
      const feePerGas = userOpEvent.actualGasCost / userOpEvent.actualGasUsed;
      const penaltyBound = (gasLimitsV07.callGasLimit + gasLimitsV07.paymasterPostOpGasLimit) / 10n;
      assert.ok(charge >= userOpEvent.actualGasCost, `charge ${charge} below the cost ${userOpEvent.actualGasCost}`);
      assert.ok(charge <= userOpEvent.actualGasCost + (overheadGas + penaltyBound) * feePerGas);
      t.diagnostic(
        `v${version}: EntryPoint took ${userOpEvent.actualGasUsed} gas, the dApp was charged ${charge / feePerGas} gas`,
      );
      await assertDepositCoversBalances();
    });

    test("a user call that reverts is still charged (postOp in opReverted mode)", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const target = env.paymaster; // has no `nonexistent()`: the account's execute reverts
      const draft = await newAccountOperationV07(env, { to: target, value: 0n, data: revertingCallData });
      const depositBefore = await entryPointDeposit();

      const { userOpEvent, charged } = await run(await sponsored(draft));

      assert.equal(userOpEvent.success, false);
      const charge = charged[0]?.args.charge ?? 0n;
      assert.ok(charge >= userOpEvent.actualGasCost);
      assert.equal(await balanceOf(fundingWallet), parseEther("1") - charge);
      assert.equal(depositBefore - (await entryPointDeposit()), userOpEvent.actualGasCost);
      await assertDepositCoversBalances();
    });

    test("a postOp that runs out of gas leaves the whole reservation charged, never less than the EntryPoint took", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const limits = { paymasterPostOpGasLimit: 1_000n };
      const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n }, limits);
      const { userOpEvent, charged, receipt } = await run(await sponsored(draft, limits));

      assert.equal(userOpEvent.success, false);
      assert.equal(charged.length, 0, "postOp cannot have completed with 1,000 gas");
      assert.equal(
        parseEventLogs({ abi: entryPointV07Abi, logs: receipt.logs, eventName: "PostOpRevertReason" }).length,
        1,
      );
      const reserved = maxCostOf({ ...gasLimitsV07, ...limits }, draft.maxFeePerGas);
      assert.equal(await balanceOf(fundingWallet), parseEther("1") - reserved);
      assert.ok(reserved >= userOpEvent.actualGasCost);
      await assertDepositCoversBalances();
    });

    test("a paymaster signature over a changed operation fails validation (AA34)", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const signed = await sponsorV07(draft.op, await terms());
      // The account re-signs, so only the paymaster's check can object.
      const tampered = await signByAccountV07(
        env,
        { ...signed, preVerificationGas: signed.preVerificationGas + 1n },
        draft.owner,
      );
      assert.deepEqual(await failedOpOfV07(env, [tampered]), { errorName: "FailedOp", args: [0n, AA34] });

      // The paymaster gas limits are bound too, though the EntryPoint reads them from paymasterAndData.
      const decoded = decodeVerifyingPaymasterAndDataV07(signed.paymasterAndData);
      const moreGas = await signByAccountV07(
        env,
        {
          ...signed,
          paymasterAndData: encodeVerifyingPaymasterAndDataV07({ ...decoded, paymasterPostOpGasLimit: 60_000n }),
        },
        draft.owner,
      );
      assert.deepEqual(await failedOpOfV07(env, [moreGas]), { errorName: "FailedOp", args: [0n, AA34] });

      const otherPaymasterId = await signByAccountV07(
        env,
        {
          ...signed,
          paymasterAndData: encodeVerifyingPaymasterAndDataV07({ ...decoded, paymasterId: otherFundingWallet }),
        },
        draft.owner,
      );
      assert.deepEqual(await failedOpOfV07(env, [otherPaymasterId]), { errorName: "FailedOp", args: [0n, AA34] });
      assert.equal(await balanceOf(fundingWallet), parseEther("1"));
    });

    test("a signature for another chain fails validation (AA34)", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const op = await sponsored(draft, { chainId: env.anvil.chainId + 1 });
      assert.deepEqual(await failedOpOfV07(env, [op]), { errorName: "FailedOp", args: [0n, AA34] });
    });

    test("a signature by a key other than the verifying signer fails validation (AA34)", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const op = await sponsored(draft, { signer: createSigner(generatePrivateKey()) });
      assert.deepEqual(await failedOpOfV07(env, [op]), { errorName: "FailedOp", args: [0n, AA34] });
    });

    test("an expired or not yet valid window is refused (AA32)", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const now = await latestTimestamp(env);
      const expired = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const expiredOp = await sponsored(expired, { validUntil: now - 1, validAfter: now - 600 });
      assert.deepEqual(await failedOpOfV07(env, [expiredOp]), { errorName: "FailedOp", args: [0n, AA32] });

      const early = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const earlyOp = await sponsored(early, { validUntil: now + 600, validAfter: now + 300 });
      assert.deepEqual(await failedOpOfV07(env, [earlyOp]), { errorName: "FailedOp", args: [0n, AA32] });
    });

    test("a dApp whose balance cannot cover the operation's maximum cost is refused (AA33)", async () => {
      const draft = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const maxCost = maxCostOf(gasLimitsV07, draft.maxFeePerGas);
      await depositFor(fundingWallet, maxCost - 1n);
      await depositFor(otherFundingWallet, parseEther("1")); // another dApp's money must not cover it
      const failure = await failedOpOfV07(env, [await sponsored(draft)]);
      assert.equal(failure.errorName, "FailedOpWithRevert");
      assert.equal(failure.args[1], AA33);
      const inner = decodeErrorResult({ abi: parseAbi(["error Error(string)"]), data: failure.args[2] as Hex });
      assert.deepEqual(inner.args, ["VerifyingPaymasterV07: paymasterId deposit too low"]);

      // One wei more and the same operation goes through.
      await depositFor(fundingWallet, 1n);
      const { userOpEvent } = await run(await sponsored(draft));
      assert.equal(userOpEvent.success, true);
    });

    test("two operations of one dApp in one bundle cannot both spend a balance that covers one", async () => {
      const first = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const second = await newAccountOperationV07(env, { to: freshAddress(), value: 0n });
      const maxCost = maxCostOf(gasLimitsV07, first.maxFeePerGas);
      await depositFor(fundingWallet, maxCost + maxCost / 2n);
      // Another dApp's money keeps the shared EntryPoint deposit large enough (no AA31): only our check can refuse.
      await depositFor(otherFundingWallet, parseEther("1"));
      const ops = [await sponsored(first), await sponsored(second)];
      // Each alone passes; together, validation has reserved the first one's maximum and the second finds the rest short.
      for (const op of ops) {
        await env.publicClient.simulateContract({
          address: env.entryPoint,
          abi: entryPointV07Abi,
          functionName: "handleOps",
          args: [[op], freshAddress()],
          account: privateKeyToAccount(anvilKeys.bundler),
        });
      }
      const failure = await failedOpOfV07(env, ops);
      assert.equal(failure.errorName, "FailedOpWithRevert");
      assert.deepEqual(failure.args.slice(0, 2), [1n, AA33]);
    });

    test("only the EntryPoint calls the hooks, and a funding wallet withdraws only its own balance", async () => {
      await depositFor(fundingWallet, parseEther("1"));
      const stranger = env.wallet(anvilKeys.stranger);
      await assert.rejects(
        env.publicClient.simulateContract({
          ...paymaster(),
          functionName: "postOp",
          args: [0, "0x", 0n, 0n],
          account: stranger.account,
        }),
        /sender not EntryPoint/,
      );
      await assert.rejects(
        env.publicClient.simulateContract({
          ...paymaster(),
          functionName: "withdrawTo",
          args: [stranger.account.address, 1n],
          account: stranger.account,
        }),
        /amount exceeds balance/,
      );
      const target = freshAddress();
      const hash = await env
        .wallet(anvilKeys.fundingWallet)
        .writeContract({ ...paymaster(), functionName: "withdrawTo", args: [target, parseEther("0.4")] });
      await env.publicClient.waitForTransactionReceipt({ hash });
      assert.equal(await env.publicClient.getBalance({ address: target }), parseEther("0.4"));
      assert.equal(await balanceOf(fundingWallet), parseEther("0.6"));
      await assertDepositCoversBalances();
    });
  });
}
