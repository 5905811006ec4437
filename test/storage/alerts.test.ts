// The alert decisions of src/storage/alerts.ts against the real database (PGlite, or PostgreSQL with DATABASE_URL,
// where the concurrent statements really run at once on a pool): one deposit.low per crossing, one limit.reached per
// limit and cycle, and an alert claimed by one delivery at a time.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  claimDueAlerts,
  type DepositFigure,
  markAlertFailed,
  markAlertSent,
  noteDepositFigure,
  noteLimitRefusal,
  pruneAlerts,
  saveAlertSettings,
} from "../../src/storage/alerts";
import type { Database } from "../../src/storage/database";
import { insertPolicy } from "../../src/storage/policies";
import { openTestDatabase } from "../helpers/database";
import { storedPaymaster } from "../helpers/storedPaymaster";

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(() => db.close());

async function paymasterWithAlerts(thresholdWei: bigint | null) {
  const paymaster = await storedPaymaster(db, "alerts");
  if (thresholdWei !== null) {
    await saveAlertSettings(db, { paymasterId: paymaster.id, thresholdWei, url: "https://hooks.example.com/a" });
  }
  return { account: { id: paymaster.accountId }, paymaster };
}

/** A spending limit "cap" of the paymaster, and its refusal in the cycle starting at `cycleStartMs`, 5 ms into it. */
async function refusalsOfCap(paymasterId: string, accountId: string) {
  const policy = await insertPolicy(db, {
    paymasterId,
    createdBy: accountId,
    name: "cap",
    policyType: "PAYMASTER_SA_LIMIT",
    policyData: {},
    cycleStartMs: 0,
  });
  return (cycleStartMs: number) => ({
    paymasterId,
    chainId: 31337,
    policyId: policy.id,
    policyName: "cap",
    cycleStartMs,
    reason: "full",
    at: new Date(cycleStartMs + 5).toISOString(),
    nowMs: cycleStartMs + 5,
  });
}

const figure = (paymasterId: string, depositWei: bigint, outstandingWei: bigint): DepositFigure => ({
  paymasterId,
  chainId: 31337,
  paymasterAddress: "0x00000000000000000000000000000000000000aa",
  entryPointVersion: "0.6",
  depositWei,
  outstandingWei,
  at: new Date(1_000).toISOString(),
  nowMs: 1_000,
});

const outbox = (paymasterId: string) =>
  db.query<{ event: string; body: string }>(
    "SELECT event, body FROM alert_outbox WHERE paymaster_id = $1 ORDER BY id",
    [paymasterId],
  );

test("deposit.low: one per crossing, under concurrent readings; above re-arms; new settings re-arm", async () => {
  const { paymaster } = await paymasterWithAlerts(100n);
  const id = paymaster.id;
  // Above first (no alert), then twenty concurrent readings below: one alert between them.
  assert.equal(await noteDepositFigure(db, figure(id, 1000n, 0n)), false);
  const below = await Promise.all(
    Array.from({ length: 20 }, (_, i) => noteDepositFigure(db, figure(id, 150n, 60n + BigInt(i)))),
  );
  assert.equal(below.filter(Boolean).length, 1);
  // Exactly at the threshold is not below: re-armed.
  assert.equal(await noteDepositFigure(db, figure(id, 100n, 0n)), false);
  assert.equal(await noteDepositFigure(db, figure(id, 99n, 0n)), true);
  assert.equal(await noteDepositFigure(db, figure(id, 10n, 20n)), false, "still below");
  // Saving the settings again forgets the state: already below, so the next reading alerts.
  await saveAlertSettings(db, { paymasterId: id, thresholdWei: 100n, url: "https://hooks.example.com/b" });
  assert.equal(await noteDepositFigure(db, figure(id, 10n, 20n)), true);

  const rows = await outbox(id);
  assert.equal(rows.length, 3);
  assert.deepEqual(JSON.parse(rows[2]?.body ?? "{}"), {
    event: "deposit.low",
    paymasterId: id,
    chainId: 31337,
    depositWei: "10",
    outstandingWei: "20",
    availableWei: "-10",
    thresholdWei: "100",
    at: "1970-01-01T00:00:01.000Z",
    entryPointVersion: "0.6",
    verifyingPaymaster: "0x00000000000000000000000000000000000000aa",
  });
});

test("without alert settings nothing is written", async () => {
  const { account, paymaster } = await paymasterWithAlerts(null);
  assert.equal(await noteDepositFigure(db, figure(paymaster.id, 0n, 10n)), false);
  const refusal = (await refusalsOfCap(paymaster.id, account.id))(0);
  assert.equal(await noteLimitRefusal(db, refusal), "alertsOff");
  assert.equal((await db.query("SELECT 1 FROM deposit_alert_state WHERE paymaster_id = $1", [paymaster.id])).length, 0);
  // Settings made later in the cycle: the cycle's next refusal alerts.
  await saveAlertSettings(db, { paymasterId: paymaster.id, thresholdWei: 0n, url: "https://hooks.example.com/a" });
  assert.equal(await noteLimitRefusal(db, refusal), "queued");
  assert.equal(await noteLimitRefusal(db, refusal), "alreadyQueued");
});

test("limit.reached: one per limit and cycle under concurrent refusals; the next cycle another", async () => {
  const { account, paymaster } = await paymasterWithAlerts(0n);
  const refusal = await refusalsOfCap(paymaster.id, account.id);
  const first = await Promise.all(Array.from({ length: 20 }, () => noteLimitRefusal(db, refusal(0))));
  assert.equal(first.filter((note) => note === "queued").length, 1);
  assert.equal(first.filter((note) => note === "alreadyQueued").length, 19);
  const next = await Promise.all(Array.from({ length: 5 }, () => noteLimitRefusal(db, refusal(3_600_000))));
  assert.equal(next.filter((note) => note === "queued").length, 1);
  const bodies = (await outbox(paymaster.id)).map((row) => JSON.parse(row.body));
  assert.deepEqual(
    bodies.map((body) => [body.event, body.policyId, body.cycleStart]),
    [
      ["limit.reached", refusal(0).policyId, "1970-01-01T00:00:00.000Z"],
      ["limit.reached", refusal(0).policyId, "1970-01-01T01:00:00.000Z"],
    ],
  );
});

test("a due alert is claimed by one delivery at a time; a failed one waits for its next attempt", async () => {
  const { paymaster } = await paymasterWithAlerts(100n);
  await noteDepositFigure(db, figure(paymaster.id, 0n, 0n));
  const mine = (claimed: Awaited<ReturnType<typeof claimDueAlerts>>) =>
    claimed.filter((alert) => alert.paymasterId === paymaster.id);
  // Concurrent claims (two instances): the alert goes to one of them.
  const claims = await Promise.all(Array.from({ length: 6 }, () => claimDueAlerts(db, 2_000, 30_000, 100)));
  const claimed = claims.flatMap(mine);
  assert.equal(claimed.length, 1);
  assert.equal(claimed[0]?.attempts, 1);
  assert.equal(claimed[0]?.event, "deposit.low");
  // Under its lease nobody takes it again; a failure schedules the next attempt, due only then.
  assert.equal(mine(await claimDueAlerts(db, 3_000, 30_000, 100)).length, 0);
  await markAlertFailed(db, claimed[0]?.id as string, "status 500", 10_000);
  assert.equal(mine(await claimDueAlerts(db, 9_999, 30_000, 100)).length, 0);
  const again = mine(await claimDueAlerts(db, 10_000, 30_000, 100));
  assert.deepEqual(
    again.map((alert) => alert.attempts),
    [2],
  );
  // An instance that stopped mid-attempt: once the lease is over, another takes the alert.
  assert.deepEqual(
    mine(await claimDueAlerts(db, 40_001, 30_000, 100)).map((alert) => alert.attempts),
    [3],
  );
});

test("pruning forgets delivered and given-up alerts queued before the date, never pending ones", async () => {
  const { paymaster } = await paymasterWithAlerts(100n);
  const states = async () =>
    (
      await db.query<{ state: string }>("SELECT state FROM alert_outbox WHERE paymaster_id = $1 ORDER BY id", [
        paymaster.id,
      ])
    ).map((row) => row.state);
  // Three alerts queued at 1 s: one delivered, one given up, one still pending.
  for (const depositWei of [0n, 1000n, 0n, 1000n, 0n])
    await noteDepositFigure(db, figure(paymaster.id, depositWei, 0n));
  const claimed = (await claimDueAlerts(db, 2_000, 30_000, 100))
    .filter((a) => a.paymasterId === paymaster.id)
    .sort((a, b) => Number(a.id) - Number(b.id));
  assert.equal(claimed.length, 3);
  await markAlertSent(db, claimed[0]?.id as string);
  await markAlertFailed(db, claimed[1]?.id as string, "status 500", null);
  assert.deepEqual(await states(), ["sent", "failed", "pending"]);
  await pruneAlerts(db, 1_000);
  assert.deepEqual(await states(), ["sent", "failed", "pending"], "not older than the date");
  await pruneAlerts(db, 1_001);
  assert.deepEqual(await states(), ["pending"]);
});
