// The two rules that read the database, over a real one (PGlite, or PostgreSQL with DATABASE_URL); one file, so the
// embedded database starts once.
// - Rule 7, the spending-limit pre-check: the exact reservations it hands to the record, and the exact refusal when
//   the usage recorded so far leaves no room. Usage is made the way the service makes it: the rule's own claim,
//   recorded by SponsorshipLog.
// - The deposit check: the balance less what unexpired sponsorships hold (recorded ones from deposit_holds, written by
//   SponsorshipLog; this process's in-flight ones) against the operation's worst case. The balance itself comes through
//   DepositBalances' `read` option: reading it from the contract on a real chain is covered by test/rpc/deposit.test.ts
//   (anvil with the deployed verifying paymaster).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Address } from "viem";
import { maxChargeWei } from "../../src/bindings/entryPoints/prefund";
import type { SignableUserOperation } from "../../src/bindings/entryPoints/v06";
import { DepositBalances } from "../../src/chain/paymasterDeposit";
import type { SponsoringChain } from "../../src/chain/sponsoringChains";
import type { PartialUserOperationV07 } from "../../src/sponsorship/partialUserOperationV07";
import type { RuleInput, RuleResult } from "../../src/sponsorship/rule";
import { depositRule, InFlightCharges, NO_RPC_REASON } from "../../src/sponsorship/rules/deposit";
import { spendingLimitRule } from "../../src/sponsorship/rules/spendingLimits";
import type { SpendingLimit } from "../../src/sponsorship/spendingLimit";
import { createAccount } from "../../src/storage/accounts";
import type { Database } from "../../src/storage/database";
import { LimitLedger } from "../../src/storage/limitLedger";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { insertPaymaster } from "../../src/storage/paymasters";
import { insertPolicy, type Policy, type ReadablePolicy } from "../../src/storage/policies";
import { type LimitClaim, SponsorshipLog } from "../../src/storage/sponsorships";
import { openTestDatabase } from "../helpers/database";
import { readable } from "../helpers/policies";
import { versionOf } from "../helpers/versionOf";

const HOUR = 3_600_000;
const DAY = 86_400_000;
/** The anchor every limit here is created with, and "now" one hour into its first cycle. */
const ANCHOR = Date.UTC(2026, 5, 1, 9, 30);
const NOW = ANCHOR + HOUR;
const VALID_UNTIL = Math.floor(NOW / 1000) + 300;
const ALICE = "0xA11CE00000000000000000000000000000000001" as Address;
const BOB = "0xb0b0000000000000000000000000000000000002" as Address;

let db: Database;
let log: SponsorshipLog;
let rule: ReturnType<typeof spendingLimitRule>;
let accountId: string;
let paymasters = 0;

before(async () => {
  db = await openTestDatabase();
  log = new SponsorshipLog(db);
  rule = spendingLimitRule(new LimitLedger(db, undefined, Date.now));
  accountId = (await createAccount(db, "limits", Date.now())).id;
});
after(() => db.close());

/** gas 100 000 + 3 × 10 000 + 20 000 = 150 000 at `fee` wei: the worst case of a NATIVE_ASSET limit. */
const userOp = (sender: Address, nonce: bigint, fee = 1_000_000_000n): SignableUserOperation => ({
  sender,
  nonce,
  initCode: "0x",
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 10_000n,
  preVerificationGas: 20_000n,
  maxFeePerGas: fee,
  maxPriorityFeePerGas: 0n,
});
const COST = 150_000n * 1_000_000_000n;

/** A v0.7 operation: every limit counts once, the paymaster's two included: 100 000 + 10 000 + 20 000 + 30 000 + 5 000. */
const userOpV07 = (sender: Address, nonce: bigint): PartialUserOperationV07 => ({
  entryPointVersion: "0.7",
  sender,
  nonce,
  callData: "0x",
  callGasLimit: 100_000n,
  verificationGasLimit: 10_000n,
  preVerificationGas: 20_000n,
  paymasterVerificationGasLimit: 30_000n,
  paymasterPostOpGasLimit: 5_000n,
  maxFeePerGas: 1_000_000_000n,
  maxPriorityFeePerGas: 0n,
});
const COST_V07 = 165_000n * 1_000_000_000n;

interface Paymaster {
  id: string;
  policies: ReadablePolicy[];
}

/** A paymaster of its own with the given rules (spending limits named by their data), anchored at ANCHOR. */
async function paymasterWith(
  limits: { name: string; data?: SpendingLimit | { url: string }; type?: Policy["policyType"] }[],
) {
  const paymaster = await insertPaymaster(db, {
    accountId,
    name: `pm-${++paymasters}`,
    chainId: 31337,
    type: "VERIFYING",
    version: "0.6",
  });
  const policies: ReadablePolicy[] = [];
  for (const limit of limits) {
    policies.push(
      readable(
        await insertPolicy(db, {
          paymasterId: paymaster.id,
          createdBy: accountId,
          name: limit.name,
          policyType: limit.type ?? "PAYMASTER_SA_LIMIT",
          policyData: { ...(limit.data ?? {}) },
          cycleStartMs: limit.type && limit.type !== "PAYMASTER_SA_LIMIT" ? null : ANCHOR,
        }),
      ),
    );
  }
  return { id: paymaster.id, policies } satisfies Paymaster;
}

function input(paymaster: Paymaster, op: SignableUserOperation | PartialUserOperationV07, nowMs = NOW): RuleInput {
  return {
    setup: {
      paymasterId: paymaster.id,
      accountId,
      chainId: 31337,
      fundingAddress: "0x00000000000000000000000000000000000f0f0f",
      policies: paymaster.policies,
      contracts: new Map(),
      webhooks: [],
    },
    userOp: op,
    version: versionOf(op),
    nowMs,
    validUntil: VALID_UNTIL,
  };
}

/** Signs (on paper) what the rule passed: records it with the rule's claim, as sponsor() does. */
async function sponsorAndRecord(paymaster: Paymaster, op: SignableUserOperation, nowMs = NOW): Promise<void> {
  const result = await rule.evaluate(input(paymaster, op, nowMs));
  assert.ok(result.passed && result.claim, `the rule passes ${op.sender} ${op.nonce}: ${result.reason}`);
  const outcome = await log.record(
    {
      paymasterId: paymaster.id,
      chainId: 31337,
      sender: op.sender,
      nonce: op.nonce,
      sponsored: true,
      userOpHash: `0x${"ab".repeat(32)}`,
      validUntil: VALID_UNTIL,
      validAfter: 0,
      ruleOutcomes: [{ rule: "spendingLimits", passed: true }],
    },
    result.claim,
  );
  assert.deepEqual(outcome, { ok: true });
}

const limit = (
  type: SpendingLimit["type"],
  thresholdType: SpendingLimit["thresholdType"],
  threshold: number,
  cycleDuration: SpendingLimit["cycleDuration"] = { value: 1, unit: "day" },
): SpendingLimit => ({ type, thresholdType, threshold, cycleDuration });

const refused = (reason: string): RuleResult => ({ rule: "spendingLimits", passed: false, reason });

describe("spendingLimits: what a passing operation claims", () => {
  test("no spending limit (other rules only): passes with no claim", async () => {
    const paymaster = await paymasterWith([
      { name: "hook", type: "WEBHOOK", data: { url: "https://hooks.example.com/verify" } },
      { name: "deploy", type: "WALLET_DEPLOYMENT" },
    ]);
    assert.deepEqual(await rule.evaluate(input(paymaster, userOp(ALICE, 1n))), {
      rule: "spendingLimits",
      passed: true,
    });
  });

  const cases: {
    name: string;
    limit: SpendingLimit;
    nowMs: number;
    expected: { cycleStartMs: number; scopeKey: string; amount: bigint; threshold: bigint };
  }[] = [
    {
      name: "PAYMASTER COUNT: 1 operation, every sender in one scope",
      limit: limit("PAYMASTER", "COUNT", 3),
      nowMs: NOW,
      expected: { cycleStartMs: ANCHOR, scopeKey: "", amount: 1n, threshold: 3n },
    },
    {
      name: "SMART_ACCOUNT COUNT: the sender, in lower case, is the scope",
      limit: limit("SMART_ACCOUNT", "COUNT", 3),
      nowMs: NOW,
      expected: { cycleStartMs: ANCHOR, scopeKey: ALICE.toLowerCase(), amount: 1n, threshold: 3n },
    },
    {
      name: "PAYMASTER NATIVE_ASSET: the worst-case cost against the threshold in wei",
      limit: limit("PAYMASTER", "NATIVE_ASSET", 0.05),
      nowMs: NOW,
      expected: { cycleStartMs: ANCHOR, scopeKey: "", amount: COST, threshold: 5n * 10n ** 16n },
    },
    {
      name: "3-hour cycles, 7 hours after the anchor: the third cycle",
      limit: limit("PAYMASTER", "COUNT", 3, { value: 3, unit: "hour" }),
      nowMs: ANCHOR + 7 * HOUR,
      expected: { cycleStartMs: ANCHOR + 6 * HOUR, scopeKey: "", amount: 1n, threshold: 3n },
    },
    {
      name: "exactly at the start of the second day",
      limit: limit("PAYMASTER", "COUNT", 3),
      nowMs: ANCHOR + DAY,
      expected: { cycleStartMs: ANCHOR + DAY, scopeKey: "", amount: 1n, threshold: 3n },
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const paymaster = await paymasterWith([{ name: "limit", data: c.limit }]);
      const result = await rule.evaluate(input(paymaster, userOp(ALICE, 7n), c.nowMs));
      const { claim, ...outcome } = result;
      assert.deepEqual(outcome, { rule: "spendingLimits", passed: true });
      assert.equal(claim?.rule, "spendingLimits");
      assert.deepEqual(claim?.reservations, [
        {
          policyId: paymaster.policies[0]?.id,
          ...c.expected,
          sender: ALICE.toLowerCase(),
          nonce: 7n,
          validUntil: VALID_UNTIL,
        },
      ]);
    });
  }

  test("a v0.7 operation reserves its EntryPoint prefund under NATIVE_ASSET, and is counted like any under COUNT", async () => {
    const paymaster = await paymasterWith([
      { name: "gas", data: limit("SMART_ACCOUNT", "NATIVE_ASSET", 0.05) },
      { name: "count", data: limit("PAYMASTER", "COUNT", 3) },
    ]);
    const result = await rule.evaluate(input(paymaster, userOpV07(BOB, 9n)));
    assert.deepEqual(
      result.claim?.reservations.map(({ scopeKey, sender, nonce, amount }) => ({ scopeKey, sender, nonce, amount })),
      [
        { scopeKey: BOB.toLowerCase(), sender: BOB.toLowerCase(), nonce: 9n, amount: COST_V07 },
        { scopeKey: "", sender: BOB.toLowerCase(), nonce: 9n, amount: 1n },
      ],
    );
  });

  test("a limit without an anchor counts cycles from the epoch", async () => {
    const paymaster = await paymasterWith([{ name: "limit", data: limit("PAYMASTER", "COUNT", 3) }]);
    const policies = paymaster.policies.map((p) => ({ ...p, cycleStartMs: null }));
    const result = await rule.evaluate(input({ ...paymaster, policies }, userOp(ALICE, 1n)));
    assert.equal(result.claim?.reservations[0]?.cycleStartMs, Date.UTC(2026, 5, 1));
  });
});

describe("spendingLimits: refusals, word for word", () => {
  test("PAYMASTER COUNT full: any sender is refused", async () => {
    const paymaster = await paymasterWith([{ name: "daily", data: limit("PAYMASTER", "COUNT", 1) }]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    const reason =
      'Spending limit "daily" (PAYMASTER, COUNT) reached: 1 of 1 user operations used in the current cycle';
    assert.deepEqual(await rule.evaluate(input(paymaster, userOp(ALICE, 2n))), refused(reason));
    assert.deepEqual(await rule.evaluate(input(paymaster, userOp(BOB, 1n))), refused(reason));
  });

  test("SMART_ACCOUNT COUNT full for one sender: that sender refused, named; another passes", async () => {
    const paymaster = await paymasterWith([{ name: "per user", data: limit("SMART_ACCOUNT", "COUNT", 2) }]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    await sponsorAndRecord(paymaster, userOp(ALICE, 2n));
    assert.deepEqual(
      await rule.evaluate(input(paymaster, userOp(ALICE, 3n))),
      refused(
        'Spending limit "per user" (SMART_ACCOUNT, COUNT) reached: 2 of 2 user operations used in the current ' +
          `cycle by sender ${ALICE.toLowerCase()}`,
      ),
    );
    assert.equal((await rule.evaluate(input(paymaster, userOp(BOB, 1n)))).passed, true);
  });

  test("NATIVE_ASSET: the usage, the threshold and this operation's cost, in ether", async () => {
    // Room for two operations of COST (1.5e14 wei each) and a bit: 0.0004 ETH.
    const paymaster = await paymasterWith([{ name: "gas budget", data: limit("PAYMASTER", "NATIVE_ASSET", 0.0004) }]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    await sponsorAndRecord(paymaster, userOp(BOB, 1n));
    assert.deepEqual(
      await rule.evaluate(input(paymaster, userOp(ALICE, 2n))),
      refused(
        'Spending limit "gas budget" (PAYMASTER, NATIVE_ASSET) reached: 0.0003 of 0.0004 ETH used in the current ' +
          "cycle; this operation may cost up to 0.00015 ETH",
      ),
    );
    // A cheaper operation still fits the 0.0001 ETH left: exactly at the threshold.
    assert.equal((await rule.evaluate(input(paymaster, userOp(ALICE, 2n, 666_666_666n)))).passed, true);
  });

  test("NATIVE_ASSET: an operation that alone costs more than the threshold, with nothing used", async () => {
    const paymaster = await paymasterWith([{ name: "tiny", data: limit("SMART_ACCOUNT", "NATIVE_ASSET", 0.0001) }]);
    assert.deepEqual(
      await rule.evaluate(input(paymaster, userOp(ALICE, 1n))),
      refused(
        'Spending limit "tiny" (SMART_ACCOUNT, NATIVE_ASSET) reached: 0 of 0.0001 ETH used in the current cycle by ' +
          `sender ${ALICE.toLowerCase()}; this operation may cost up to 0.00015 ETH`,
      ),
    );
  });

  test("several limits: the refusal names the one that is full", async () => {
    const paymaster = await paymasterWith([
      { name: "roomy", data: limit("PAYMASTER", "COUNT", 100) },
      { name: "tight", data: limit("SMART_ACCOUNT", "COUNT", 1) },
    ]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    const result = await rule.evaluate(input(paymaster, userOp(ALICE, 2n)));
    assert.deepEqual(
      result,
      refused(
        'Spending limit "tight" (SMART_ACCOUNT, COUNT) reached: 1 of 1 user operations used in the current cycle ' +
          `by sender ${ALICE.toLowerCase()}`,
      ),
    );
  });

  test("the claim's refusal (at record time) has the pre-check's words", async () => {
    const paymaster = await paymasterWith([{ name: "daily", data: limit("PAYMASTER", "COUNT", 1) }]);
    const result = await rule.evaluate(input(paymaster, userOp(ALICE, 1n)));
    assert.equal(
      (result.claim as LimitClaim).refusal(0, 1n),
      'Spending limit "daily" (PAYMASTER, COUNT) reached: 1 of 1 user operations used in the current cycle',
    );
  });
});

describe("spendingLimits: what counts as used", () => {
  test("the same (sender, nonce) again replaces its own reservation: it still fits a full limit", async () => {
    const paymaster = await paymasterWith([{ name: "daily", data: limit("PAYMASTER", "COUNT", 1) }]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    assert.equal((await rule.evaluate(input(paymaster, userOp(ALICE, 1n)))).passed, true);
    assert.equal((await rule.evaluate(input(paymaster, userOp(ALICE, 2n)))).passed, false);
  });

  const cycles: { name: string; nowMs: number; passed: boolean }[] = [
    { name: "one ms before the next cycle: still full", nowMs: ANCHOR + DAY - 1, passed: false },
    { name: "exactly at the next cycle: room again", nowMs: ANCHOR + DAY, passed: true },
    { name: "ten cycles later: room again", nowMs: ANCHOR + 10 * DAY + 5, passed: true },
  ];
  for (const c of cycles) {
    test(`usage of a cycle stays in it: ${c.name}`, async () => {
      const paymaster = await paymasterWith([{ name: "daily", data: limit("PAYMASTER", "COUNT", 1) }]);
      await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
      assert.equal((await rule.evaluate(input(paymaster, userOp(ALICE, 2n), c.nowMs))).passed, c.passed);
    });
  }

  test("a rule not in the setup (paused) is not evaluated", async () => {
    const paymaster = await paymasterWith([{ name: "daily", data: limit("PAYMASTER", "COUNT", 1) }]);
    await sponsorAndRecord(paymaster, userOp(ALICE, 1n));
    assert.deepEqual(await rule.evaluate(input({ ...paymaster, policies: [] }, userOp(ALICE, 2n))), {
      rule: "spendingLimits",
      passed: true,
    });
  });
});

const VERIFYING_PAYMASTER = "0x5C3b8F4a3a1E0c7f1C1Fd1a6A7e1B1d7E1c0FfEE" as Address;
const VERIFYING_PAYMASTER_V07 = "0x7a0000000000000000000000000000000000c0de" as Address;
const CHAIN: SponsoringChain = {
  chainId: 31337,
  name: "local",
  entryPoint: "0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789",
  verifyingPaymaster: VERIFYING_PAYMASTER,
  rpcUrl: "http://127.0.0.1:1",
  entryPoints: new Map([
    ["0.7", { entryPoint: "0x0000000071727De22E5E9d8BAf0edAc6f37da032", verifyingPaymaster: VERIFYING_PAYMASTER_V07 }],
  ]),
};
/** What the contract reserves for userOp(…) at 1 gwei: (150 000 + 12 000 overhead) × 1 gwei. */
const NEEDED = maxChargeWei(userOp(ALICE, 0n));
let wallets = 0;
/** A funding wallet no other test uses, so that deposit_holds rows never mix between tests. */
const freshWallet = () => `0x${(++wallets).toString(16).padStart(40, "0")}` as Address;

interface DepositCase {
  chain?: SponsoringChain | undefined;
  balance: bigint | Error;
  inFlight?: InFlightCharges;
}

/** The rule over a real OutstandingCharges; the balance read is counted. */
function deposit(given: DepositCase) {
  const { balance, inFlight } = given;
  // An explicit `chain: undefined` means no chain configured.
  const chain = "chain" in given ? given.chain : CHAIN;
  const reads: string[] = [];
  /** Which paymaster contract each read asked. */
  const paymasters: (string | undefined)[] = [];
  const balances = new DepositBalances({
    now: Date.now,
    read: async (readChain, wallet) => {
      reads.push(`${readChain.chainId}:${wallet}`);
      paymasters.push(readChain.verifyingPaymaster);
      if (balance instanceof Error) throw balance;
      return balance;
    },
  });
  const chains = new Map(chain ? [[chain.chainId, chain]] : []);
  const rule = depositRule({
    chains,
    balances,
    outstanding: new OutstandingCharges(db),
    ...(inFlight ? { inFlight } : {}),
  });
  return { rule, reads, paymasters };
}

function depositInput(wallet: Address, op: RuleInput["userOp"] = userOp(ALICE, 1n)): RuleInput {
  return {
    setup: {
      paymasterId: "unused",
      accountId,
      chainId: 31337,
      fundingAddress: wallet,
      policies: [],
      contracts: new Map(),
      webhooks: [],
    },
    userOp: op,
    version: versionOf(op),
    nowMs: NOW,
    validUntil: VALID_UNTIL,
  };
}

/** The rule's outcome without its functions, which deepEqual cannot compare. */
function outcomeOf(result: RuleResult) {
  const { release, afterRecord, ...outcome } = result;
  return outcome;
}

const tooSmall = (wallet: Address, balance: string, held: string, needed: string) => ({
  rule: "deposit",
  passed: false,
  reason:
    `Deposit too small: the paymaster's deposit for ${wallet.toLowerCase()} is ${balance} ETH, ` +
    `${held} ETH is held by unexpired sponsorships, this operation needs up to ${needed} ETH`,
});

/** A sponsorship recorded against `wallet`'s deposit, as sponsor() records one on a chain with an RPC. */
async function recordHold(
  wallet: Address,
  maxCharge: bigint,
  options: { validUntil?: number; paymasterAddress?: Address; chainId?: number } = {},
) {
  const paymaster = await paymasterWith([]);
  const outcome = await log.record({
    paymasterId: paymaster.id,
    chainId: options.chainId ?? 31337,
    sender: ALICE,
    nonce: BigInt(++wallets),
    sponsored: true,
    userOpHash: `0x${"cd".repeat(32)}`,
    validUntil: options.validUntil ?? VALID_UNTIL,
    validAfter: 0,
    ruleOutcomes: [],
    fundingAddress: wallet,
    paymasterAddress: options.paymasterAddress ?? VERIFYING_PAYMASTER,
    maxCharge,
  });
  assert.deepEqual(outcome, { ok: true });
}

describe("deposit: when it is checked, and the balance against the worst case", () => {
  test("the worst case of these operations", () => assert.equal(NEEDED, 162_000_000_000_000n));

  const cases: { name: string; given: DepositCase; expected: (wallet: Address) => RuleResult; reads: number }[] = [
    {
      name: "a chain that is not configured: nothing read, passes",
      given: { chain: undefined, balance: 0n },
      expected: () => ({ rule: "deposit", passed: true }),
      reads: 0,
    },
    {
      name: "a chain without a verifying paymaster: nothing read, passes (the sponsorship refuses earlier)",
      given: { chain: { ...CHAIN, verifyingPaymaster: undefined }, balance: 0n },
      expected: () => ({ rule: "deposit", passed: true }),
      reads: 0,
    },
    {
      name: "a chain without an RPC: nothing read, passes, saying the deposit was not checked",
      given: { chain: { ...CHAIN, rpcUrl: undefined }, balance: 0n },
      expected: () => ({ rule: "deposit", passed: true, reason: NO_RPC_REASON }),
      reads: 0,
    },
    {
      name: "a balance of exactly the worst case: passes",
      given: { balance: NEEDED },
      expected: () => ({ rule: "deposit", passed: true }),
      reads: 1,
    },
    {
      name: "one wei less: refused, in ether",
      given: { balance: NEEDED - 1n },
      expected: (wallet) => tooSmall(wallet, "0.000161999999999999", "0", "0.000162"),
      reads: 1,
    },
    {
      name: "an empty deposit",
      given: { balance: 0n },
      expected: (wallet) => tooSmall(wallet, "0", "0", "0.000162"),
      reads: 1,
    },
    {
      name: "a read that fails: refused, never signed past an unknown deposit",
      given: { balance: new Error("boom") },
      expected: () => ({
        rule: "deposit",
        passed: false,
        reason:
          "Deposit not checked: reading it through the RPC of chain 31337 (local) failed: boom; no operation is " +
          "sponsored past a deposit that cannot be read",
      }),
      reads: 1,
    },
  ];
  for (const c of cases) {
    test(c.name, async () => {
      const wallet = freshWallet();
      const { rule: check, reads } = deposit(c.given);
      assert.deepEqual(outcomeOf(await check.evaluate(depositInput(wallet))), c.expected(wallet));
      assert.deepEqual(reads, c.reads ? [`31337:${wallet}`] : []);
    });
  }

  test("a v0.7 operation needs its EntryPoint prefund: exactly that passes, one wei less is refused", async () => {
    const enough = freshWallet();
    const checked = deposit({ balance: COST_V07 });
    assert.deepEqual(outcomeOf(await checked.rule.evaluate(depositInput(enough, userOpV07(ALICE, 1n)))), {
      rule: "deposit",
      passed: true,
    });
    assert.deepEqual(checked.paymasters, [VERIFYING_PAYMASTER_V07], "the balance read is the v0.7 paymaster's");
    const short = freshWallet();
    assert.deepEqual(
      outcomeOf(await deposit({ balance: COST_V07 - 1n }).rule.evaluate(depositInput(short, userOpV07(ALICE, 1n)))),
      tooSmall(short, "0.000164999999999999", "0", "0.000165"),
    );
  });

  test("a v0.7 operation on a chain that names no v0.7 paymaster is not checked (nothing can be signed for it)", async () => {
    const checked = deposit({ chain: { ...CHAIN, entryPoints: new Map() }, balance: 0n });
    assert.deepEqual(outcomeOf(await checked.rule.evaluate(depositInput(freshWallet(), userOpV07(ALICE, 1n)))), {
      rule: "deposit",
      passed: true,
    });
    assert.deepEqual(checked.reads, []);
  });

  test("a v0.6 operation still reads the v0.6 paymaster on a chain that serves v0.7 too", async () => {
    const checked = deposit({ balance: 10n ** 18n });
    await checked.rule.evaluate(depositInput(freshWallet()));
    assert.deepEqual(checked.paymasters, [VERIFYING_PAYMASTER]);
  });

  test("a funding wallet in mixed case is read and named in lower case", async () => {
    const wallet = "0xAbCdEf0000000000000000000000000000000001" as Address;
    const { rule: check, reads } = deposit({ balance: 0n });
    assert.deepEqual(outcomeOf(await check.evaluate(depositInput(wallet))), tooSmall(wallet, "0", "0", "0.000162"));
    assert.deepEqual(reads, [`31337:${wallet.toLowerCase()}`]);
  });
});

describe("deposit: what unexpired sponsorships hold", () => {
  const HELD = 10n ** 15n;
  const nowSeconds = Math.floor(NOW / 1000);
  const cases: {
    name: string;
    hold: { validUntil?: number; paymasterAddress?: Address; chainId?: number; otherWallet?: true };
    counts: boolean;
  }[] = [
    { name: "a recorded sponsorship of the wallet", hold: {}, counts: true },
    { name: "one that expired 30 s ago (within the margin)", hold: { validUntil: nowSeconds - 30 }, counts: true },
    // The margin is 60 s after the validity's end rounded up to the minute (NOW is on a whole minute).
    { name: "one that expired 60 s ago (the margin's edge)", hold: { validUntil: nowSeconds - 60 }, counts: true },
    { name: "one that expired 121 s ago (past the margin)", hold: { validUntil: nowSeconds - 121 }, counts: false },
    { name: "one of another funding wallet", hold: { otherWallet: true }, counts: false },
    {
      name: "one for another verifying paymaster contract",
      hold: { paymasterAddress: "0x0000000000000000000000000000000000000bad" },
      counts: false,
    },
    { name: "one on another chain", hold: { chainId: 80002 }, counts: false },
  ];
  for (const c of cases) {
    test(`${c.name}: ${c.counts ? "counts" : "does not count"}`, async () => {
      const wallet = freshWallet();
      await recordHold(c.hold.otherWallet ? freshWallet() : wallet, HELD, c.hold);
      // Exactly enough for the hold and this operation: passes either way. One wei less: refused only if it counts.
      const enough = deposit({ balance: HELD + NEEDED });
      assert.equal((await enough.rule.evaluate(depositInput(wallet))).passed, true);
      const short = deposit({ balance: HELD + NEEDED - 1n });
      const outcome = outcomeOf(await short.rule.evaluate(depositInput(wallet)));
      if (c.counts) assert.deepEqual(outcome, tooSmall(wallet, "0.001161999999999999", "0.001", "0.000162"));
      else assert.deepEqual(outcome, { rule: "deposit", passed: true });
    });
  }

  test("in flight: a passed operation holds its worst case until released or recorded", async () => {
    const wallet = freshWallet();
    const inFlight = new InFlightCharges();
    const key = `31337:${VERIFYING_PAYMASTER.toLowerCase()}:${wallet}`;
    // Room for one and a half operations.
    const { rule: check } = deposit({ balance: NEEDED + NEEDED / 2n, inFlight });
    const first = await check.evaluate(depositInput(wallet));
    assert.deepEqual(outcomeOf(first), { rule: "deposit", passed: true });
    assert.equal(inFlight.heldNow(key), NEEDED);
    assert.deepEqual(
      outcomeOf(await check.evaluate(depositInput(wallet, userOp(BOB, 1n)))),
      tooSmall(wallet, "0.000243", "0.000162", "0.000162"),
    );
    await first.release?.();
    assert.equal(inFlight.heldNow(key), 0n);

    const second = await check.evaluate(depositInput(wallet, userOp(BOB, 1n)));
    assert.equal(second.passed, true);
    second.afterRecord?.(false);
    assert.equal(inFlight.heldNow(key), 0n, "not recorded: dropped");

    const third = await check.evaluate(depositInput(wallet, userOp(BOB, 2n)));
    third.afterRecord?.(true);
    assert.equal(inFlight.heldNow(key), 0n, "recorded: the outstanding query counts it from now on");
    third.afterRecord?.(true);
    await third.release?.();
    assert.equal(inFlight.heldNow(key), 0n, "a hold is let go once");
  });

  test("in flight: one recorded while the last check under way reads still counts for that check", async () => {
    // A passes and holds; B starts reading; A's record lands after B's outstanding query took its snapshot (modelled
    // by marking it recorded without a row: B's query cannot see it), then B's read ends, the only read under way.
    // Room for one and a half operations: B must count A and be refused.
    const wallet = freshWallet();
    const inFlight = new InFlightCharges();
    const first = deposit({ balance: NEEDED + NEEDED / 2n, inFlight });
    const a = await first.rule.evaluate(depositInput(wallet));
    assert.equal(a.passed, true);
    let readStarted!: () => void;
    const reading = new Promise<void>((resolve) => {
      readStarted = resolve;
    });
    let answer!: (balance: bigint) => void;
    const balance = new Promise<bigint>((resolve) => {
      answer = resolve;
    });
    const b = depositRule({
      chains: new Map([[CHAIN.chainId, CHAIN]]),
      balances: new DepositBalances({
        now: Date.now,
        read: () => {
          readStarted();
          return balance;
        },
      }),
      outstanding: new OutstandingCharges(db),
      inFlight,
    }).evaluate(depositInput(wallet, userOp(BOB, 1n)));
    await reading;
    a.afterRecord?.(true);
    answer(NEEDED + NEEDED / 2n);
    assert.deepEqual(outcomeOf(await b), tooSmall(wallet, "0.000243", "0.000162", "0.000162"));
  });

  test("in flight: readings are ordered by when they end, each counting the holds placed before", () => {
    const inFlight = new InFlightCharges();
    const slow = inFlight.beginRead();
    const quick = inFlight.beginRead();
    const first = inFlight.endRead(quick, "k");
    inFlight.hold("k", 5n);
    const second = inFlight.endRead(slow, "k");
    assert.deepEqual([first.held, second.held], [0n, 5n]);
    assert.ok(second.order > first.order, "the read that ended later is the newer, whichever began first");
  });

  test("recorded and in-flight holds add up", async () => {
    const wallet = freshWallet();
    await recordHold(wallet, HELD);
    const inFlight = new InFlightCharges();
    const { rule: check } = deposit({ balance: HELD + NEEDED + NEEDED / 2n, inFlight });
    assert.equal((await check.evaluate(depositInput(wallet))).passed, true);
    assert.deepEqual(
      outcomeOf(await check.evaluate(depositInput(wallet, userOp(BOB, 1n)))),
      tooSmall(wallet, "0.001243", "0.001162", "0.000162"),
    );
  });
});
