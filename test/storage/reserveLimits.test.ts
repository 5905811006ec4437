// The PostgreSQL reservation's one round trip (migration 16's function, called by reserveLimits): the usage rows it
// creates and locks, and what it reads as already held. On PostgreSQL also what makes it exact across instances: the
// locks last until the caller's transaction ends, and the held reservations are read after the locks are granted, so a
// reservation committed by the transaction it waited for is seen.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Queryable } from "../../src/storage/database";
import type { Reservation } from "../../src/storage/limitLedger";
import { reserveLimits } from "../../src/storage/reserveLimits";
import { startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";
import { testDatabaseUrl } from "../helpers/database";

let t: TestApp;
let policyId: string;
before(async () => {
  t = await startTestApp();
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  policyId = await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", {
    type: "SMART_ACCOUNT",
    cycleDuration: { value: 1, unit: "day" },
    threshold: 10,
    thresholdType: "COUNT",
  });
});
after(() => t.close());

const CYCLE = 1_700_000_000_000;
let nextSender = 1;
const newSender = () => `0x${(nextSender++).toString(16).padStart(40, "0")}`;

function reservation(sender: string, nonce: bigint, amount = 1n): Reservation {
  return { policyId, cycleStartMs: CYCLE, scopeKey: sender, sender, nonce, amount, threshold: 10n, validUntil: 2e9 };
}

async function usedOf(sender: string): Promise<string | undefined> {
  const [row] = await t.db.query<{ used: string }>(
    "SELECT used::text AS used FROM limit_usage WHERE policy_id = $1 AND cycle_start_ms = $2 AND scope_key = $3",
    [policyId, CYCLE, sender],
  );
  return row?.used;
}

/** A promise and the function that settles it: one transaction tells the test where it stands, the test tells it on. */
function signal<T = void>(): { fire: (value: T) => void; fired: Promise<T> } {
  let fire!: (value: T) => void;
  const fired = new Promise<T>((resolve) => {
    fire = resolve;
  });
  return { fire, fired };
}

/** A usage row locked by another transaction is refused at once (55P03) rather than waited for. */
const LOCK_NOWAIT = "SELECT 1 FROM limit_usage WHERE policy_id = $1 AND scope_key = $2 FOR UPDATE NOWAIT";

/** A reservation as the record batch writes it, and the usage it adds. */
async function hold(tx: Queryable, r: Reservation) {
  await tx.query(
    `INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [r.policyId, r.cycleStartMs, r.sender, r.nonce.toString(), r.scopeKey, r.amount.toString(), r.validUntil],
  );
  await tx.query(
    "UPDATE limit_usage SET used = used + $4 WHERE policy_id = $1 AND cycle_start_ms = $2 AND scope_key = $3",
    [r.policyId, r.cycleStartMs, r.scopeKey, r.amount.toString()],
  );
}

test("a new sender's usage row is created at zero, and several reservations of one batch add up in order", async () => {
  const sender = newSender();
  assert.equal(await usedOf(sender), undefined);
  const { outcomes, writes } = await t.db.transaction((tx) =>
    reserveLimits(tx, [[reservation(sender, 1n, 4n)], [reservation(sender, 2n, 5n)], [reservation(sender, 3n, 2n)]]),
  );
  assert.equal(await usedOf(sender), "0", "created by the call, written by the record batch (not here)");
  assert.deepEqual(outcomes, [
    { ok: true, previous: [null] },
    { ok: true, previous: [null] },
    { ok: false, index: 0, used: 9n },
  ]);
  assert.deepEqual(
    writes.usage.map((u) => [u.scopeKey, u.delta]),
    [[sender, 9n]],
  );
});

test("what a (sender, nonce) already holds is read and replaced, not added to", async () => {
  const sender = newSender();
  await t.db.transaction(async (tx) => {
    await reserveLimits(tx, [[reservation(sender, 1n, 6n)]]);
    await hold(tx, reservation(sender, 1n, 6n));
  });
  const { outcomes, writes } = await t.db.transaction((tx) => reserveLimits(tx, [[reservation(sender, 1n, 8n)]]));
  assert.deepEqual(outcomes, [{ ok: true, previous: [6n] }]);
  assert.deepEqual(
    writes.usage.map((u) => u.delta),
    [2n],
  );
});

test("PostgreSQL: the usage rows stay locked until the caller's transaction ends", {
  skip: !testDatabaseUrl(),
}, async () => {
  const sender = newSender();
  await t.db.transaction((tx) => reserveLimits(tx, [[reservation(sender, 1n)]]));
  const locked = signal();
  const release = signal();
  const holder = t.db.transaction(async (tx) => {
    await reserveLimits(tx, [[reservation(sender, 2n)]]);
    locked.fire();
    await release.fired;
  });
  await locked.fired;
  await assert.rejects(
    t.db.transaction((tx) => tx.query(LOCK_NOWAIT, [policyId, sender])),
    (error: { code?: string }) => error.code === "55P03",
  );
  release.fire();
  await holder;
  await t.db.transaction((tx) => tx.query(LOCK_NOWAIT, [policyId, sender]));
});

test("PostgreSQL: a reservation committed by the transaction the call waited for is seen as held", {
  skip: !testDatabaseUrl(),
}, async () => {
  const sender = newSender();
  await t.db.transaction((tx) => reserveLimits(tx, [[reservation(sender, 1n)]]));
  const holderPid = signal<number>();
  const release = signal();
  // Another instance's record batch: holds the sender's usage row, then writes a reservation for nonce 7 and commits.
  const other = t.db.transaction(async (tx) => {
    await reserveLimits(tx, [[reservation(sender, 7n, 3n)]]);
    const [me] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    holderPid.fire(Number(me?.pid));
    await release.fired;
    await hold(tx, reservation(sender, 7n, 3n));
  });
  const pid = await holderPid.fired;
  const waiting = t.db.transaction((tx) => reserveLimits(tx, [[reservation(sender, 7n, 5n)]]));
  // Released only once the second call waits on the holder's lock: its statement began before the holder's commit.
  try {
    for (const deadline = Date.now() + 30_000; ; ) {
      const [row] = await t.db.query<{ waiting: string }>(
        "SELECT count(*)::text AS waiting FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))",
        [pid],
      );
      if (row?.waiting !== "0") break;
      assert.ok(Date.now() < deadline, "the second call never waited on the lock");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    release.fire();
  }
  await other;
  const { outcomes, writes } = await waiting;
  assert.deepEqual(outcomes, [{ ok: true, previous: [3n] }]);
  assert.deepEqual(
    writes.usage.map((u) => u.delta),
    [2n],
  );
});
