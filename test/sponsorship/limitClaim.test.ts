import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ENTRY_POINT_VERSIONS } from "../../src/bindings/entryPoints/versions";
import { decide } from "../../src/sponsorship/decide";
import { loadSponsorshipSetup } from "../../src/sponsorship/loadSetup";
import { type Rule, refuse } from "../../src/sponsorship/rule";
import { spendingLimitRule } from "../../src/sponsorship/rules/spendingLimits";
import type { Database } from "../../src/storage/database";
import { LimitLedger } from "../../src/storage/limitLedger";
import { releaseExpired } from "../../src/storage/settlement";
import { listSponsorships, SponsorshipLog, type SponsorshipRecord } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";

let t: TestApp;
let log: SponsorshipLog;
let limit: Rule;
before(async () => {
  t = await startTestApp();
  log = new SponsorshipLog(t.db);
  limit = spendingLimitRule(new LimitLedger(t.db, undefined, Date.now));
});
after(() => t.close());

const veto: Rule = { name: "veto", evaluate: () => refuse("veto", "a later rule said no") };
const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4" as const;
const userOp = (maxFeePerGas: bigint, nonce = 1n) => ({
  sender: SENDER,
  nonce,
  initCode: "0x" as const,
  callData: "0x" as const,
  callGasLimit: 100_000n,
  verificationGasLimit: 0n,
  preVerificationGas: 0n,
  maxFeePerGas,
  maxPriorityFeePerGas: 0n,
});

async function dappWithLimit(threshold: number, thresholdType: "COUNT" | "NATIVE_ASSET"): Promise<Dapp> {
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", {
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    threshold,
    thresholdType,
  });
  return dapp;
}

async function input(dapp: Dapp, fee: bigint, nonce = 1n) {
  const setup = await loadSponsorshipSetup(t.db, dapp.apiKey);
  assert.ok(setup);
  return {
    setup,
    userOp: userOp(fee, nonce),
    version: ENTRY_POINT_VERSIONS["0.6"],
    smartAccount: { name: "BICONOMY", version: "2.0.0" },
    nowMs: Date.now(),
    validUntil: Math.floor(Date.now() / 1000) + 300,
  };
}

const sponsoredRecord = (dapp: Dapp, nonce = 1n): SponsorshipRecord => ({
  paymasterId: dapp.paymasterId,
  chainId: dapp.chainId,
  sender: SENDER,
  nonce,
  sponsored: true,
  userOpHash: `0x${"ab".repeat(32)}`,
  validUntil: Math.floor(Date.now() / 1000) + 300,
  validAfter: 0,
  ruleOutcomes: [{ rule: "spendingLimits", passed: true }],
});

async function ledger(dapp: Dapp) {
  const usage = await t.db.query<{ used: string }>(
    `SELECT u.used::text AS used FROM limit_usage u JOIN policies p ON p.id = u.policy_id WHERE p.paymaster_id = $1`,
    [dapp.paymasterId],
  );
  const held = await t.db.query<{ amount: string }>(
    `SELECT r.amount::text AS amount FROM limit_reservations r JOIN policies p ON p.id = r.policy_id
     WHERE p.paymaster_id = $1`,
    [dapp.paymasterId],
  );
  return { used: usage.map((r) => r.used), held: held.map((r) => r.amount) };
}

test("the rule reserves nothing: the record makes the reservation, a later refusal leaves nothing behind", async () => {
  const dapp = await dappWithLimit(1, "NATIVE_ASSET");
  const vetoed = await decide(await input(dapp, 10n), [limit, veto]);
  assert.equal(vetoed.sponsored, false);
  assert.deepEqual(await ledger(dapp), { used: [], held: [] });

  const first = await decide(await input(dapp, 10n), [limit]);
  assert.ok(first.sponsored && first.claim);
  assert.deepEqual(await ledger(dapp), { used: [], held: [] }, "nothing is reserved before the record");
  assert.deepEqual(await log.record(sponsoredRecord(dapp), first.claim), { ok: true });
  assert.deepEqual(await ledger(dapp), { used: ["1000000"], held: ["1000000"] });

  // The same (sender, nonce) again at a higher fee, vetoed: the first reservation stands as it was.
  const again = await decide(await input(dapp, 30n), [limit, veto]);
  assert.deepEqual(again, {
    sponsored: false,
    reason: "a later rule said no",
    outcomes: [
      { rule: "spendingLimits", passed: true },
      { rule: "veto", passed: false, reason: "a later rule said no" },
    ],
  });
  const broken: Rule = {
    name: "broken",
    evaluate: () => {
      throw new Error("webhook client crashed");
    },
  };
  await assert.rejects(decide(await input(dapp, 50n), [limit, broken]), /webhook client crashed/);
  assert.deepEqual(await ledger(dapp), { used: ["1000000"], held: ["1000000"] });

  // Recorded, the repeat replaces its own reservation.
  const repeat = await decide(await input(dapp, 30n), [limit]);
  assert.ok(repeat.sponsored);
  assert.deepEqual(await log.record(sponsoredRecord(dapp), repeat.claim), { ok: true });
  assert.deepEqual(await ledger(dapp), { used: ["3000000"], held: ["3000000"] });
});

test("two operations that both passed the pre-check: the record binds one, the other is recorded as refused", async () => {
  const dapp = await dappWithLimit(1, "COUNT");
  const [a, b] = await Promise.all([
    decide(await input(dapp, 10n, 1n), [limit]),
    decide(await input(dapp, 10n, 2n), [limit]),
  ]);
  assert.ok(a?.sponsored && a.claim && b?.sponsored && b.claim, "both fit the usage as it was");
  const outcomes = await Promise.all([
    log.record(sponsoredRecord(dapp, 1n), a.claim),
    log.record(sponsoredRecord(dapp, 2n), b.claim),
  ]);
  const reason =
    'Spending limit "PAYMASTER_SA_LIMIT" (PAYMASTER, COUNT) reached: 1 of 1 user operations used in the current cycle';
  assert.deepEqual(outcomes, [{ ok: true }, { ok: false, reason }]);
  assert.deepEqual(await ledger(dapp), { used: ["1"], held: ["1"] });
  // One transaction, one created_at: in nonce order.
  const rows = (await listSponsorships(t.db, dapp.paymasterId)).sort((x, y) => Number(x.nonce) - Number(y.nonce));
  assert.deepEqual(
    rows.map((r) => [r.nonce, r.sponsored, r.reason, r.user_op_hash, r.valid_until, r.rule_outcomes.at(-1)]),
    [
      ["1", true, null, `0x${"ab".repeat(32)}`, rows[0]?.valid_until, { rule: "spendingLimits", passed: true }],
      ["2", false, reason, null, null, { rule: "spendingLimits", passed: false, reason }],
    ],
  );
});

test("a record that fails leaves no reservation: both are one transaction", async () => {
  const dapp = await dappWithLimit(5, "COUNT");
  const decision = await decide(await input(dapp, 10n), [limit]);
  assert.ok(decision.sponsored && decision.claim);
  // A mode the table does not know: the row's CHECK fails after the reservation was made in the transaction.
  await assert.rejects(
    log.record({ ...sponsoredRecord(dapp), mode: "BOGUS" as SponsorshipRecord["mode"] }, decision.claim),
    /check constraint/,
  );
  assert.deepEqual(await ledger(dapp), { used: [], held: [] });
});

test("room that settlement gives back is usable at once, by the pre-check and by the record", async () => {
  const dapp = await dappWithLimit(1, "COUNT");
  const first = await decide(await input(dapp, 10n, 1n), [limit]);
  assert.ok(first.sponsored && first.claim);
  assert.deepEqual(await log.record(sponsoredRecord(dapp, 1n), first.claim), { ok: true });
  const full = await decide(await input(dapp, 10n, 2n), [limit]);
  assert.equal(full.sponsored, false, "1 of 1 used");

  // The first operation expires unmined: settlement gives its reservation back, behind the ledger's back if it kept
  // a copy of the usage (the embedded database keeps one in memory).
  const released = await releaseExpired(t.db, {
    chainId: dapp.chainId,
    cutoff: Math.floor(Date.now() / 1000) + 10_000,
    atMs: Date.now(),
  });
  assert.ok(released.reservations >= 1);
  assert.deepEqual(await ledger(dapp), { used: ["0"], held: [] });

  const second = await decide(await input(dapp, 10n, 2n), [limit]);
  assert.ok(second.sponsored && second.claim, "the pre-check sees the room given back");
  assert.deepEqual(await log.record(sponsoredRecord(dapp, 2n), second.claim), { ok: true });
  assert.deepEqual(await ledger(dapp), { used: ["1"], held: ["1"] });
  const third = await decide(await input(dapp, 10n, 3n), [limit]);
  assert.equal(third.sponsored, false, "and counts the new one");
});

/**
 * The pre-check of another instance's service: its own ledger, on a database handle that counts its statements, with
 * a clock the test moves. Its records go through the same log as everyone's.
 */
function instanceWithClock() {
  let statements = 0;
  const counted: Database = {
    ...t.db,
    query: (sql, params) => {
      statements++;
      return t.db.query(sql, params);
    },
  };
  const clock = { nowMs: 1_000_000 };
  const rule = spendingLimitRule(new LimitLedger(counted, undefined, () => clock.nowMs));
  return { rule, clock, statements: () => statements };
}

const countFull = (used: number, of: number) =>
  `Spending limit "PAYMASTER_SA_LIMIT" (PAYMASTER, COUNT) reached: ${used} of ${of} user operations used in the current cycle`;

test("an operation far below its limit is passed on the usage read within the last five seconds, not past half of it", async () => {
  const dapp = await dappWithLimit(10, "COUNT");
  const ours = instanceWithClock();
  const passed = async (nonce: bigint) => (await decide(await input(dapp, 10n, nonce), [ours.rule])).sponsored;
  assert.ok(await passed(1n));
  assert.equal(ours.statements(), 1, "nothing read yet: the database answers");
  // 0 read, then 1 to 4 let through here: each plus its 1 is at most 5 of 10.
  for (const nonce of [2n, 3n, 4n, 5n]) assert.ok(await passed(nonce));
  assert.equal(ours.statements(), 1, "far below the limit, read lately: no statement");
  assert.ok(await passed(6n));
  assert.equal(ours.statements(), 2, "5 counted plus 1 is past half of 10: read again");
  ours.clock.nowMs += 4_999;
  assert.ok(await passed(7n));
  assert.equal(ours.statements(), 2);
  ours.clock.nowMs += 1;
  assert.ok(await passed(8n));
  assert.equal(ours.statements(), 3, "a read five seconds old is read again");
});

test("a nearly full limit is refused before the signature with its exact words, whatever was read lately", async () => {
  const dapp = await dappWithLimit(10, "COUNT");
  const ours = instanceWithClock();
  const others = spendingLimitRule(new LimitLedger(t.db, undefined, Date.now));
  const recordBy = async (rule: Rule, nonce: bigint) => {
    const decision = await decide(await input(dapp, 10n, nonce), [rule]);
    assert.ok(decision.sponsored && decision.claim);
    assert.deepEqual(await log.record(sponsoredRecord(dapp, nonce), decision.claim), { ok: true });
  };
  for (const nonce of [1n, 2n, 3n, 4n]) await recordBy(others, nonce);
  await recordBy(ours.rule, 5n);
  assert.equal(ours.statements(), 1, "4 read, 5 of 10 counted");
  for (const nonce of [6n, 7n, 8n, 9n, 10n]) await recordBy(others, nonce);
  const refused = await decide(await input(dapp, 10n, 11n), [ours.rule]);
  assert.deepEqual(refused, {
    sponsored: false,
    reason: countFull(10, 10),
    outcomes: [{ rule: "spendingLimits", passed: false, reason: countFull(10, 10) }],
  });
  assert.equal(ours.statements(), 2, "past half of the limit: read, within the same five seconds");
});

test("a usage others raised since the last read can let an operation through, never into the record", async () => {
  const dapp = await dappWithLimit(10, "COUNT");
  const ours = instanceWithClock();
  const others = spendingLimitRule(new LimitLedger(t.db, undefined, Date.now));
  const first = await decide(await input(dapp, 10n, 1n), [ours.rule]);
  assert.ok(first.sponsored && first.claim);
  assert.deepEqual(await log.record(sponsoredRecord(dapp, 1n), first.claim), { ok: true });
  for (let nonce = 2n; nonce <= 10n; nonce++) {
    const decision = await decide(await input(dapp, 10n, nonce), [others]);
    assert.ok(decision.sponsored && decision.claim);
    assert.deepEqual(await log.record(sponsoredRecord(dapp, nonce), decision.claim), { ok: true });
  }
  // Ours read 0 and counted 1: the limit looks far from full, though others filled it.
  const stale = await decide(await input(dapp, 10n, 11n), [ours.rule]);
  assert.ok(stale.sponsored && stale.claim, "passed on the usage read half a second ago");
  assert.equal(ours.statements(), 1);
  assert.deepEqual(await log.record(sponsoredRecord(dapp, 11n), stale.claim), {
    ok: false,
    reason: countFull(10, 10),
  });
  assert.deepEqual(await ledger(dapp), { used: ["10"], held: Array(10).fill("1") });
  const row = (await listSponsorships(t.db, dapp.paymasterId)).find((r) => r.nonce === "11");
  assert.deepEqual([row?.sponsored, row?.reason, row?.user_op_hash], [false, countFull(10, 10), null]);
  ours.clock.nowMs += 5_000;
  assert.equal((await decide(await input(dapp, 10n, 12n), [ours.rule])).sponsored, false, "read again, refused");
});
