// A PostgreSQL batch with spending limits recorded in one statement (reserveLimits.ts's LIMITS_IF_ALL_FIT inside the
// records' statement, sponsorships.ts): what it writes is what reserveLimits.ts's arithmetic writes, a refusal writes
// nothing (the batch then goes through the transaction's path), and a deadlock is run again. The limits' part is
// compared with the arithmetic on both databases; the records' statement runs on PostgreSQL only (the embedded
// database keeps the limits in memory and never sends it).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database, Queryable } from "../../src/storage/database";
import type { Reservation } from "../../src/storage/limitLedger";
import { heldKey, usageKey } from "../../src/storage/memoryLedger";
import {
  fittingBatch,
  fittingParameters,
  LIMITS_IF_ALL_FIT,
  limitsNoLongerFit,
  reserveLimits,
} from "../../src/storage/reserveLimits";
import { type LimitClaim, SponsorshipLog, type SponsorshipRecord } from "../../src/storage/sponsorships";
import { addEndpoint } from "../events/helpers";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet } from "../helpers/dappSetup";
import { testDatabaseUrl } from "../helpers/database";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const onPostgres = { skip: !testDatabaseUrl() && "the embedded database reserves in memory, never by this statement" };

/** Numbers from a fixed seed (mulberry32), so that a failing batch comes back on the next run. */
function randomFrom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { below: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p };
}

/** A dApp with `count` limits (the function reads no policy, but the rows need one to belong to). */
async function dappWithLimits(count: number, type: "PAYMASTER" | "SMART_ACCOUNT" = "PAYMASTER", threshold = 1000) {
  const dapp = await t.dapp();
  const fundingAddress = await linkFundingWallet(t, dapp);
  const policies: string[] = [];
  for (let i = 0; i < count; i++) {
    const policyData = { type, cycleDuration: { value: 1, unit: "day" }, threshold, thresholdType: "COUNT" };
    policies.push(await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", policyData, `limit-${i}`));
  }
  return { dapp, fundingAddress, policies };
}

interface Ledger {
  usage: Map<string, string>;
  held: Map<string, string>;
}

async function ledgerOf(db: Queryable, policies: string[], cycles: number[]): Promise<Ledger> {
  const params = [policies, cycles.map(String)];
  const usage = await db.query<{ policy_id: string; cycle_start_ms: string; scope_key: string; used: string }>(
    `SELECT policy_id, cycle_start_ms::text, scope_key, used::text FROM limit_usage
     WHERE policy_id = ANY ($1::uuid[]) AND cycle_start_ms = ANY ($2::bigint[])`,
    params,
  );
  const held = await db.query<{
    policy_id: string;
    cycle_start_ms: string;
    sender: string;
    nonce: string;
    scope_key: string;
    amount: string;
    valid_until: string;
  }>(
    `SELECT policy_id, cycle_start_ms::text, sender, nonce::text, scope_key, amount::text, valid_until::text
     FROM limit_reservations WHERE policy_id = ANY ($1::uuid[]) AND cycle_start_ms = ANY ($2::bigint[])`,
    params,
  );
  return {
    usage: new Map(usage.map((u) => [usageKey(u.policy_id, u.cycle_start_ms, u.scope_key), u.used])),
    held: new Map(
      held.map((h) => [
        heldKey(h.policy_id, h.cycle_start_ms, h.sender, h.nonce),
        `${h.scope_key}:${h.amount}:${h.valid_until}`,
      ]),
    ),
  };
}

/**
 * The limits' part of the records' statement alone: true when it wrote the batch's usage and reservations, false when
 * it ended the statement (nothing written), undefined when the batch is not a common one and goes the transaction's
 * way without it.
 */
const reserveIfAllFit = async (db: Queryable, operations: Reservation[][]) => {
  const batch = fittingBatch(operations);
  if (!batch) return undefined;
  const limits = LIMITS_IF_ALL_FIT(1);
  try {
    await db.query(`WITH ${limits.ctes} SELECT ${limits.fits}`, fittingParameters(batch) as unknown[]);
    return true;
  } catch (error) {
    if (limitsNoLongerFit(error)) return false;
    throw error;
  }
};

/** What only the transaction's way decides: a batch repeating a reservation, or two thresholds on one usage row. */
function uncommon(operations: Reservation[][], held: Map<string, string>): boolean {
  const flat = operations.flat();
  const keys = flat.map((r) => heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce));
  const thresholds = new Map<string, bigint>();
  const mixed = flat.some((r) => {
    const key = usageKey(r.policyId, r.cycleStartMs, r.scopeKey);
    const first = thresholds.get(key) ?? r.threshold;
    thresholds.set(key, first);
    return first !== r.threshold;
  });
  return mixed || new Set(keys).size < keys.length || keys.some((key) => held.has(key));
}

test("over random batches, the one statement writes what reserveLimits' arithmetic does, or nothing", async () => {
  const { policies } = await dappWithLimits(3);
  const senders = ["0x00000000000000000000000000000000000000a1", "0x00000000000000000000000000000000000000a2"];
  // Policy 0 is a PAYMASTER limit (scope ''), the others per sender: several operations share a usage row.
  const scopeOf = (policy: number, sender: string) => (policy === 0 ? "" : sender);
  const random = randomFrom(36);
  const trials = 150;
  let written = 0;
  let undone = 0;
  for (let trial = 0; trial < trials; trial++) {
    const cycles = [1_700_000_000_000 + trial * 10, 1_700_000_000_000 + trial * 10 + 1];
    const thresholds = policies.map(() => BigInt(2 + random.below(10)));
    // What is stored before: some reservations (of nonces the batch may repeat), and the usage that holds them, or
    // more (what settled operations counted).
    const usage: unknown[][] = [[], [], [], []];
    const held: unknown[][] = [[], [], [], [], [], []];
    for (const [p, policyId] of policies.entries())
      for (const cycle of cycles)
        for (const scope of p === 0 ? [""] : senders) {
          let used = random.chance(0.5) ? random.below(4) : 0;
          for (const owner of p === 0 ? senders : [scope])
            for (let nonce = 0; nonce < 3; nonce++) {
              if (!random.chance(0.25)) continue;
              const amount = random.below(5);
              used += amount;
              for (const [i, value] of [policyId, cycle, owner, nonce, scope, amount].entries())
                held[i]?.push(String(value));
            }
          if (used > 0 || random.chance(0.5))
            for (const [i, value] of [policyId, cycle, scope, used].entries()) usage[i]?.push(String(value));
        }
    await t.db.query(
      "INSERT INTO limit_usage SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::numeric[])",
      usage,
    );
    await t.db.query(
      `INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
       SELECT *, 2000000000 FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::numeric[], $5::text[], $6::numeric[])`,
      held,
    );
    // The batch: 1 to 6 operations, each with 1 to 3 distinct limits (as the rule makes them, one per policy).
    const operations = Array.from({ length: 1 + random.below(6) }, () => {
      const sender = senders[random.below(senders.length)] as string;
      const nonce = BigInt(random.below(3));
      const chosen = policies.flatMap((_, p) => (random.chance(0.6) ? [p] : []));
      return (chosen.length > 0 ? chosen : [random.below(policies.length)]).map(
        (p): Reservation => ({
          policyId: policies[p] as string,
          cycleStartMs: cycles[random.below(cycles.length)] as number,
          scopeKey: scopeOf(p, sender),
          sender,
          nonce,
          amount: BigInt(random.below(p === 0 ? 2 : 6)),
          // Now and then a reservation above its threshold alone.
          threshold: random.chance(0.05) ? 0n : (thresholds[p] as bigint),
          validUntil: 2_000_000_000 + random.below(1000),
        }),
      );
    });
    const { outcomes, writes } = await t.db.transaction((tx) => reserveLimits(tx, operations));
    const allFit = outcomes.every((outcome) => outcome.ok);
    // Read after reserveLimits, which created the missing usage rows at zero (it writes nothing else: its writes are
    // returned, for the records' statement).
    const before = await ledgerOf(t.db, policies, cycles);
    const expected = { usage: new Map(before.usage), held: new Map(before.held) };
    for (const u of writes.usage) {
      const key = usageKey(u.policyId, u.cycleStartMs, u.scopeKey);
      expected.usage.set(key, String(BigInt(expected.usage.get(key) ?? "0") + u.delta));
    }
    for (const r of writes.reservations)
      expected.held.set(
        heldKey(r.policyId, r.cycleStartMs, r.sender, r.nonce),
        `${r.scopeKey}:${r.amount}:${r.validUntil}`,
      );
    const answer = await reserveIfAllFit(t.db, operations);
    const context = `trial ${trial}: ${JSON.stringify(operations, (_, v) => (typeof v === "bigint" ? `${v}` : v))}`;
    const after = await ledgerOf(t.db, policies, cycles);
    if (answer === true) {
      assert.ok(allFit, `written although some operation does not fit: ${context}`);
      assert.deepEqual(after, expected, context);
      written++;
    } else {
      assert.deepEqual(after, before, `nothing written: ${context}`);
      // Left to the transaction although all fit: only a batch the arithmetic alone decides.
      if (allFit) assert.ok(uncommon(operations, before.held), `a common batch that fits was not written: ${context}`);
      if (answer === false) undone++;
    }
  }
  // Each way is taken often enough for the comparison to mean something.
  assert.ok(written > trials / 10, `${written} of ${trials} batches written`);
  assert.ok(undone > trials / 20, `${undone} of ${trials} batches undone by the statement`);
});

/** The statements a log sends: the one statement, others, and transactions; and faults to put in its way. */
function watched(db: Database, faults: { fitRefused?: boolean; noTransaction?: boolean } = {}) {
  const sent: string[] = [];
  const wrapped: Database = {
    kind: db.kind,
    exec: (sql) => db.exec(sql),
    listen: (channel, handlers) => db.listen(channel, handlers),
    close: () => db.close(),
    async query<Row>(sql: string, params?: unknown[]): Promise<Row[]> {
      const one = sql.includes("limits_fit_or_fail(");
      sent.push(one ? "one statement" : "statement");
      // As if a limit had filled since the pre-check: the batch goes the transaction's way, having written nothing.
      if (one && faults.fitRefused) throw Object.assign(new Error("no longer fits"), { code: "PM001" });
      return db.query<Row>(sql, params);
    },
    transaction(work) {
      sent.push("transaction");
      if (faults.noTransaction) return Promise.reject(new Error("no transaction in this test"));
      return db.transaction(work);
    },
  };
  return { db: wrapped, sent };
}

const CYCLE = 1_700_000_000_000;
const sender = (i: number) => `0x${i.toString(16).padStart(40, "0")}`;
const validUntil = Math.floor(Date.now() / 1000) + 3600;

function record(dapp: Dapp, fundingAddress: string, i: number, sponsored = true): SponsorshipRecord {
  return {
    paymasterId: dapp.paymasterId,
    chainId: dapp.chainId,
    sender: sender(i),
    nonce: BigInt(i),
    sponsored,
    ...(sponsored
      ? {
          userOpHash: `0x${i.toString(16).padStart(64, "0")}`,
          validUntil,
          validAfter: 0,
          maxCharge: 1000n * BigInt(i),
          worstCaseWei: 1000n * BigInt(i),
          fundingAddress,
          paymasterAddress: "0x00000000000000000000000000000000000000f1",
          entryPoint: "0x00000000000000000000000000000000000000e1",
          mode: "SPONSORED" as const,
        }
      : { reason: "refused by a rule" }),
    ruleOutcomes: [{ rule: "spendingLimits", passed: sponsored }],
  };
}

/** A claim on each of the dApp's limits: the first per paymaster, the others per sender when `perSender`. */
function claim(policies: string[], i: number, amount: bigint, threshold: bigint, perSender = false): LimitClaim {
  return {
    rule: "spendingLimits",
    reservations: policies.map((policyId, p) => ({
      policyId,
      cycleStartMs: CYCLE,
      scopeKey: perSender || p > 0 ? sender(i) : "",
      sender: sender(i),
      nonce: BigInt(i),
      amount,
      threshold,
      validUntil,
    })),
    refusal: (index, used) => `limit ${index} full at ${used}`,
  };
}

/** Everything a batch of the dApp wrote, without its ids: rows, limits, holds and events. */
async function writtenBy(dapp: Dapp, fundingAddress: string, policies: string[]) {
  const rows = await t.db.query(
    `SELECT sender, nonce::text, sponsored, reason, user_op_hash, valid_until::text, max_charge::text, rule_outcomes
     FROM sponsorships WHERE paymaster_id = $1 ORDER BY nonce`,
    [dapp.paymasterId],
  );
  const usage = await t.db.query<{ policy_id: string; scope_key: string; used: string }>(
    "SELECT policy_id, scope_key, used::text FROM limit_usage WHERE policy_id = ANY ($1::uuid[]) ORDER BY 1, 2",
    [policies],
  );
  const held = await t.db.query<{ policy_id: string; sender: string; amount: string }>(
    `SELECT policy_id, sender, nonce::text, scope_key, amount::text, valid_until::text FROM limit_reservations
     WHERE policy_id = ANY ($1::uuid[]) ORDER BY 1, 2, 3`,
    [policies],
  );
  const holds = await t.db.query(
    "SELECT valid_until_minute::text, held::text FROM deposit_holds WHERE funding_address = $1 ORDER BY 1",
    [fundingAddress],
  );
  const events = await t.db.query(
    `SELECT data - 'paymasterId' AS data FROM events WHERE paymaster_id = $1 AND type = 'sponsorship.signed'
     ORDER BY data->>'nonce'`,
    [dapp.paymasterId],
  );
  // The limits by their position in the dApp's list, so that two dApps compare.
  const position = (policyId: string) => policies.indexOf(policyId);
  const byPosition = (a: { policy_id: number }, b: { policy_id: number }) => a.policy_id - b.policy_id;
  return {
    rows,
    usage: usage.map((u) => ({ ...u, policy_id: position(u.policy_id) })).sort(byPosition),
    held: held.map((h) => ({ ...h, policy_id: position(h.policy_id) })).sort(byPosition),
    holds,
    events,
  };
}

/** A dApp with two limits and an endpoint for sponsorship.signed (nothing listens there: only the outbox counts). */
async function recordingDapp() {
  const setup = await dappWithLimits(2);
  await addEndpoint(t, setup.dapp, "http://127.0.0.1:9/events");
  return setup;
}

test(
  "PostgreSQL: a batch that fits is one statement, and writes what the transaction's path writes",
  onPostgres,
  async () => {
    const one = await recordingDapp();
    const two = await recordingDapp();
    const batch = (setup: typeof one, log: SponsorshipLog) =>
      Promise.all([
        ...[1, 2, 3].map((i) =>
          log.record(record(setup.dapp, setup.fundingAddress, i), claim(setup.policies, i, 1n, 10n)),
        ),
        log.record(record(setup.dapp, setup.fundingAddress, 4)),
        log.record(record(setup.dapp, setup.fundingAddress, 5, false)),
      ]);
    const direct = watched(t.db);
    const fallback = watched(t.db, { fitRefused: true });
    assert.deepEqual(await batch(one, new SponsorshipLog(direct.db)), Array(5).fill({ ok: true }));
    assert.deepEqual(await batch(two, new SponsorshipLog(fallback.db)), Array(5).fill({ ok: true }));
    assert.deepEqual(direct.sent, ["one statement"], "no BEGIN, no COMMIT, no lock statement of its own");
    assert.deepEqual(fallback.sent, ["one statement", "transaction"]);

    const written = await writtenBy(one.dapp, one.fundingAddress, one.policies);
    assert.deepEqual(written, await writtenBy(two.dapp, two.fundingAddress, two.policies));
    assert.equal(written.rows.length, 5);
    assert.deepEqual(
      written.usage.map((u) => u.used),
      ["3", "1", "1", "1"],
    );
    assert.equal(written.held.length, 6);
    assert.deepEqual(written.holds, [{ valid_until_minute: String(Math.ceil(validUntil / 60) * 60), held: "10000" }]);
    assert.equal(written.events.length, 4);
  },
);

test(
  "PostgreSQL: a batch that repeats a (sender, nonce) goes the transaction's way, the repeat replacing its reservation",
  onPostgres,
  async () => {
    const { dapp, fundingAddress, policies } = await recordingDapp();
    const watching = watched(t.db);
    const log = new SponsorshipLog(watching.db);
    const outcomes = await Promise.all([
      ...[1, 2, 3].map((i) => log.record(record(dapp, fundingAddress, i), claim(policies, i, 1n, 10n))),
      // Operation 3 again (same sender, nonce): it replaces its reservation, adding nothing to the usage.
      log.record(record(dapp, fundingAddress, 3), claim(policies, 3, 1n, 10n)),
    ]);
    assert.deepEqual(outcomes, Array(4).fill({ ok: true }));
    assert.deepEqual(watching.sent, ["transaction"], "the one statement is not tried");
    const written = await writtenBy(dapp, fundingAddress, policies);
    assert.equal(written.rows.length, 4);
    assert.deepEqual(
      written.usage.map((u) => u.used),
      ["3", "1", "1", "1"],
    );
    assert.equal(written.held.length, 6);
  },
);

test(
  "PostgreSQL: when a limit filled since the pre-check, the one statement writes nothing and the transaction refuses the operation",
  onPostgres,
  async () => {
    const setup = await recordingDapp();
    const { dapp, fundingAddress, policies } = setup;
    // The dApp's limit counted one operation since the pre-checks, which each saw room for three.
    await t.db.query("INSERT INTO limit_usage VALUES ($1, $2, '', 1)", [policies[0], CYCLE]);
    const submit = (log: SponsorshipLog) => [
      log.record(record(dapp, fundingAddress, 4)),
      ...[1, 2, 3].map((i) => log.record(record(dapp, fundingAddress, i), claim(policies, i, 1n, 3n))),
    ];
    const before = await writtenBy(dapp, fundingAddress, policies);
    // With the transaction's path shut, what the one statement alone wrote stays: nothing at all.
    const shut = watched(t.db, { noTransaction: true });
    const outcomes = await Promise.allSettled(submit(new SponsorshipLog(shut.db)));
    assert.ok(outcomes.every((o) => o.status === "rejected" && /no transaction in this test/.test(String(o.reason))));
    assert.deepEqual(shut.sent, ["one statement", "transaction"]);
    const after = await writtenBy(dapp, fundingAddress, policies);
    assert.deepEqual(before.usage, [{ policy_id: 0, scope_key: "", used: "1" }]);
    assert.deepEqual(after, before, "no record, usage, reservation, hold or event");

    const open = watched(t.db);
    assert.deepEqual(await Promise.all(submit(new SponsorshipLog(open.db))), [
      { ok: true },
      { ok: true },
      { ok: true },
      { ok: false, reason: "limit 0 full at 3" },
    ]);
    assert.deepEqual(open.sent, ["one statement", "transaction"]);
    const written = await writtenBy(dapp, fundingAddress, policies);
    assert.deepEqual(
      written.rows.map((r) => [r.nonce, r.sponsored, r.reason]),
      [
        ["1", true, null],
        ["2", true, null],
        ["3", false, "limit 0 full at 3"],
        ["4", true, null],
      ],
    );
    assert.deepEqual(
      written.usage.map((u) => u.used),
      ["3", "1", "1", "0"],
    );
    assert.equal(written.events.length, 3);
    assert.deepEqual(written.holds, [{ valid_until_minute: String(Math.ceil(validUntil / 60) * 60), held: "7000" }]);
  },
);

test("PostgreSQL: a batch whose statement deadlocks is run again", onPostgres, async () => {
  const { dapp, fundingAddress, policies } = await dappWithLimits(1, "SMART_ACCOUNT");
  // The two senders' usage rows, which the statement locks in key order: 0x…1 first, 0x…2 second.
  await t.db.query("INSERT INTO limit_usage VALUES ($1, $2, $3, 0), ($1, $2, $4, 0)", [
    policies[0],
    CYCLE,
    sender(1),
    sender(2),
  ]);
  const lock = "SELECT 1 FROM limit_usage WHERE policy_id = $1 AND scope_key = $2 FOR UPDATE";
  const watching = watched(t.db);
  const log = new SponsorshipLog(watching.db);
  let recorded: Promise<unknown> | undefined;
  // The other side takes the rows in the opposite order, waiting long enough that the statement's backend is the
  // one that finds the deadlock (after its deadlock_timeout) and is rolled back.
  await t.db.transaction(async (tx) => {
    await tx.query("SET LOCAL deadlock_timeout = '60s'");
    await tx.query(lock, [policies[0], sender(2)]);
    const [me] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    recorded = Promise.all(
      [1, 2].map((i) => log.record(record(dapp, fundingAddress, i), claim(policies, i, 1n, 5n, true))),
    );
    for (const deadline = Date.now() + 30_000; ; ) {
      const [row] = await t.db.query<{ waiting: string }>(
        "SELECT count(*)::text AS waiting FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))",
        [me?.pid],
      );
      if (row?.waiting !== "0") break;
      assert.ok(Date.now() < deadline, "the statement never waited on the row held here");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Granted once the statement is rolled back for the deadlock.
    await tx.query(lock, [policies[0], sender(1)]);
  });
  assert.deepEqual(await recorded, [{ ok: true }, { ok: true }]);
  // Sent again only after a deadlock. The second may meet this transaction once more (it can take the row the first
  // let go before this transaction's waiting lock is granted), and is then run a third time.
  assert.ok(watching.sent.length >= 2, "the first ended in the deadlock");
  assert.ok(watching.sent.every((sent) => sent === "one statement"));
  const written = await writtenBy(dapp, fundingAddress, policies);
  assert.deepEqual(
    written.rows.map((r) => [r.nonce, r.sponsored]),
    [
      ["1", true],
      ["2", true],
    ],
  );
  assert.deepEqual(
    written.usage.map((u) => u.used),
    ["1", "1"],
  );
});

test("a repeated (sender, nonce) at a lower amount lowers the usage, on every path", async () => {
  const { dapp, fundingAddress, policies } = await dappWithLimits(2);
  const paths = testDatabaseUrl() ? [watched(t.db), watched(t.db, { fitRefused: true })] : [watched(t.db)];
  for (const [n, path] of paths.entries()) {
    const log = new SponsorshipLog(path.db);
    const i = 10 + n;
    assert.deepEqual(await log.record(record(dapp, fundingAddress, i), claim(policies, i, 5n, 100n)), { ok: true });
    assert.deepEqual(await log.record(record(dapp, fundingAddress, i), claim(policies, i, 2n, 100n)), { ok: true });
    const written = await writtenBy(dapp, fundingAddress, policies);
    assert.deepEqual(
      written.usage.filter((u) => u.scope_key === "" || u.scope_key === sender(i)).map((u) => u.used),
      [String(2 * (n + 1)), "2"],
    );
  }
});
