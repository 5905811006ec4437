// GET /sponsorships and /sponsorships/stats over real records: sponsorships and refusals made through
// pm_sponsorUserOperation, one settled and the old ones released through the storage functions settlement runs, the
// clock injected so that expiry is decided by the test. Filters, pages without gaps or repeats, stats, errors.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { maxChargeWei } from "../../src/bindings/entryPoints/prefund";
import { openCursor, releaseExpired, settleRange } from "../../src/storage/settlement";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS, userOpV06 } from "../helpers/userOps";

let clockMs = Date.UTC(2026, 10, 23, 12, 0, 0);
let t: TestApp;
let dapp: Dapp;
const SENDER_A = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";
const SENDER_B = "0x1111111111111111111111111111111111111111";
const EXPIRY_SECONDS = 600;

const op = (sender: string, nonce: number, maxFeePerGas: bigint) =>
  userOpV06(sender, nonce, { maxFeePerGas: maxFeePerGas.toString() });
const CHEAP = 1_000_000_000n;
/** Above the cap: refused by rule. */
const DEAR = 2_000_000_000n;

async function sponsor(sender: string, nonce: number, fee: bigint) {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [
    op(sender, nonce, fee),
    { mode: "SPONSORED", expiryDuration: EXPIRY_SECONDS },
  ]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
}

type Row = Record<string, unknown> & { userOpHash: string | null; status: string; createdAt: number };
const auth = () => ({ token: dapp.token, apiKey: dapp.apiKey });
const ledger = (query: Record<string, string> = {}, who = auth()) => t.call("GET", "sponsorships", { ...who, query });
const rowsOf = async (query: Record<string, string> = {}) => {
  const reply = await ledger(query);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as Row[];
};

let minedHash: string;
before(async () => {
  t = await startTestApp({ now: () => clockMs });
  dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  await addPolicy(t, dapp, "MAX_COST_PER_OP", { threshold: 0.0003, thresholdType: "NATIVE_ASSET" }, "cap");
  // The old ones: three of A sponsored (one will be mined, two will expire) and a refusal.
  for (const nonce of [0, 1, 2]) await sponsor(SENDER_A, nonce, CHEAP);
  await sponsor(SENDER_A, 3, DEAR);
  // Eleven minutes later: pending ones, some answered together (same batch, same created_at), and refusals of B.
  clockMs += 11 * 60_000;
  await Promise.all([4, 5, 6, 7].map((nonce) => sponsor(SENDER_A, nonce, CHEAP)));
  await Promise.all([0, 1].map((nonce) => sponsor(SENDER_B, nonce, DEAR)));
  await sponsor(SENDER_B, 2, CHEAP);

  // Settlement: nonce 0 of A mined (its event, as the watcher reads it), then the expired rest released.
  const all = await rowsOf({ limit: "500" });
  const first = all.find((row) => row.nonce === "0" && row.sender === SENDER_A);
  minedHash = first?.userOpHash as string;
  const { cursor } = await openCursor(t.db, dapp.chainId, "0xgenesis", 10n);
  await settleRange(t.db, {
    chainId: dapp.chainId,
    fromBlock: cursor.lastBlock + 1n,
    toBlock: cursor.lastBlock + 1n,
    events: [
      {
        userOpHash: minedHash,
        sender: SENDER_A,
        nonce: 0n,
        success: true,
        actualGasCost: 123_456_789n,
        actualGasUsed: 150_000n,
        txHash: `0x${"ab".repeat(32)}`,
        blockNumber: 11n,
      },
    ],
    atMs: clockMs,
    validAfterSkewSeconds: 60,
  });
});
after(() => t.close());

describe("GET /sponsorships", () => {
  test("lists every answer newest first, with its status and figures", async () => {
    const rows = await rowsOf();
    assert.equal(rows.length, 11);
    const times = rows.map((row) => row.createdAt);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      "newest first",
    );
    const byStatus = (status: string) => rows.filter((row) => row.status === status);
    assert.equal(byStatus("mined").length, 1);
    assert.equal(byStatus("expired").length, 2, "nonces 1 and 2 of A: validUntil passed, not yet released");
    assert.equal(byStatus("pending").length, 5);
    assert.equal(byStatus("refused").length, 3);

    const mined = byStatus("mined")[0] as Row;
    const worstCase = maxChargeWei({ ...PLAIN_GAS, maxFeePerGas: CHEAP }).toString();
    assert.deepEqual(
      { ...mined, createdAt: typeof mined.createdAt, settledAt: mined.settledAt === clockMs },
      {
        userOpHash: minedHash,
        sender: SENDER_A,
        nonce: "0",
        chainId: dapp.chainId,
        entryPoint: "0x5ff137d4b0fdcd49dca30c7cf57e578a026d2789",
        mode: "SPONSORED",
        status: "mined",
        reason: null,
        worstCaseWei: worstCase,
        // Signed with the gas as sent: no L1 part was estimated.
        l1DataGas: null,
        actualWei: "123456789",
        transactionHash: `0x${"ab".repeat(32)}`,
        createdAt: "number",
        settledAt: true,
      },
    );
    const refused = byStatus("refused")[0] as Row;
    assert.equal(refused.userOpHash, null);
    assert.match(refused.reason as string, /^Cost cap "cap" exceeded/);
    assert.equal(refused.worstCaseWei, null);
    assert.equal(refused.settledAt, null);
    for (const row of byStatus("pending")) {
      assert.equal(row.worstCaseWei, worstCase);
      assert.equal(row.actualWei, null);
      assert.equal(row.transactionHash, null);
      assert.equal(row.settledAt, null);
    }
  });

  test("expired before and after settlement releases it: settledAt appears, the status stays", async () => {
    const before = await rowsOf({ status: "expired" });
    assert.deepEqual(
      before.map((row) => [row.nonce, row.settledAt]),
      [
        ["2", null],
        ["1", null],
      ],
    );
    // The watcher's release (here without its margin: validUntil was a minute ago).
    await releaseExpired(t.db, { chainId: dapp.chainId, cutoff: Math.floor(clockMs / 1000), atMs: clockMs });
    const released = await rowsOf({ status: "expired" });
    assert.deepEqual(
      released.map((row) => [row.nonce, row.settledAt]),
      [
        ["2", clockMs],
        ["1", clockMs],
      ],
    );
  });

  test("filters by status, sender and time, alone and together", async () => {
    const all = await rowsOf();
    for (const status of ["pending", "mined", "expired", "refused"]) {
      const rows = await rowsOf({ status });
      assert.deepEqual(
        rows,
        all.filter((row) => row.status === status),
        status,
      );
    }
    // Any case: addresses are compared in lowercase.
    const ofB = await rowsOf({ sender: SENDER_B.toUpperCase().replace("0X", "0x") });
    assert.deepEqual(
      ofB,
      all.filter((row) => row.sender === SENDER_B),
    );
    assert.equal(ofB.length, 3);
    assert.deepEqual(
      await rowsOf({ sender: SENDER_B, status: "refused" }),
      ofB.filter((row) => row.status === "refused"),
    );
    // from included, to excluded, on createdAt.
    const oldest = Math.min(...all.map((row) => row.createdAt));
    const newest = Math.max(...all.map((row) => row.createdAt));
    assert.deepEqual(
      await rowsOf({ from: String(newest) }),
      all.filter((row) => row.createdAt >= newest),
    );
    assert.deepEqual(
      await rowsOf({ to: String(newest) }),
      all.filter((row) => row.createdAt < newest),
    );
    assert.deepEqual(await rowsOf({ from: String(oldest), to: String(oldest) }), []);
  });

  test("pages: every row once, in order, whatever the page size; with a filter too", async () => {
    const all = await rowsOf({ limit: "500" });
    for (const limit of [1, 2, 3, 4, 10, 11]) {
      const seen: Row[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 20; pages++) {
        const reply = await ledger({ limit: String(limit), ...(cursor ? { cursor } : {}) });
        assert.equal(reply.status, 200);
        const rows = reply.body.data as Row[];
        assert.ok(rows.length <= limit);
        seen.push(...rows);
        cursor = (reply.body.nextCursor as string | null) ?? undefined;
        if (!cursor) break;
      }
      assert.equal(cursor, undefined, `limit ${limit}: the pages end`);
      assert.deepEqual(seen, all, `limit ${limit}`);
    }
    const pending = await rowsOf({ status: "pending" });
    const first = await ledger({ status: "pending", limit: "2" });
    const second = await ledger({ status: "pending", limit: "2", cursor: first.body.nextCursor as string });
    const third = await ledger({ status: "pending", limit: "2", cursor: second.body.nextCursor as string });
    assert.deepEqual(
      [...(first.body.data as Row[]), ...(second.body.data as Row[]), ...(third.body.data as Row[])],
      pending,
    );
    assert.equal(third.body.nextCursor, null);
  });

  test("another dApp sees none of these rows", async () => {
    const other = await t.dapp();
    const reply = await ledger({}, { token: other.token, apiKey: other.apiKey });
    assert.deepEqual(reply.body, { statusCode: 200, message: "Sponsorships fetched", data: [], nextCursor: null });
  });

  test("bad filters are refused with the field named; no credentials, a 401", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ status: "done" }, "status must be one of pending, mined, expired, refused"],
      [{ sender: "0x12" }, "sender must be an address: 0x followed by 40 hex digits"],
      [{ from: "yesterday" }, "from must be a time in milliseconds since the epoch: a whole number"],
      [{ to: "-5" }, "to must be a time in milliseconds since the epoch: a whole number"],
      [{ from: "2000", to: "1000" }, "from must not be after to"],
      [{ to: "999999999999999" }, "to must be at most 253402214400000 (9999-12-31)"],
      [{ limit: "501" }, "limit must be a whole number from 1 to 500"],
      [{ limit: "0" }, "limit must be a whole number from 1 to 500"],
      [{ cursor: "bm90LWEtY3Vyc29y" }, "cursor must be the nextCursor of a previous page of this list"],
    ];
    for (const [query, message] of cases) {
      assert.deepEqual((await ledger(query)).body, { statusCode: 400, message }, JSON.stringify(query));
    }
    // A cursor of another list (the rules') is not one of this list.
    await addPolicy(t, dapp, "WALLET_DEPLOYMENT", {}, "deploy");
    const rules = await t.call("GET", "paymaster-policy", { ...auth(), query: { limit: "1" } });
    const ruleCursor = rules.body.nextCursor as string;
    assert.equal((await ledger({ cursor: ruleCursor })).status, 400);
    assert.equal((await t.call("GET", "sponsorships", { token: dapp.token })).status, 401);
  });
});

test("the metrics tell the ledger's size", async () => {
  const reply = await t.app.inject({ method: "GET", url: "/metrics" });
  assert.equal(reply.statusCode, 200);
  assert.match(reply.body, /^paymaster_sponsorship_ledger_rows 11$/m);
  const bytes = Number(/^paymaster_sponsorship_ledger_bytes (\d+)$/m.exec(reply.body)?.[1]);
  assert.ok(bytes > 8192, `${bytes} bytes`);
});

test("on the embedded database the growing ledger is analyzed, as autovacuum would on PostgreSQL", async (context) => {
  if (t.db.kind !== "pglite") return context.skip("PostgreSQL analyzes on its own");
  let rows = -1;
  for (let tries = 0; tries < 50 && rows < 0; tries++) {
    const [row] = await t.db.query<{ rows: number }>(
      "SELECT reltuples::int AS rows FROM pg_class WHERE oid = 'sponsorships'::regclass",
    );
    rows = row?.rows ?? -1;
    if (rows < 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(rows >= 1, `reltuples ${rows}`);
  // Only the columns the ledger's pages filter and sort on are analyzed: the wide ones would slow every analysis.
  const analyzed = await t.db.query<{ attname: string }>(
    "SELECT attname FROM pg_stats WHERE tablename = 'sponsorships' ORDER BY attname",
  );
  assert.deepEqual(
    analyzed.map((row) => row.attname),
    ["created_at", "paymaster_id", "released_at", "sender", "settled_at", "sponsored", "valid_until"],
  );
});

describe("GET /sponsorships/stats", () => {
  const stats = (query: Record<string, string>) => t.call("GET", "sponsorships/stats", { ...auth(), query });

  test("counts by status and spend per bucket, every bucket of the range", async () => {
    const all = await rowsOf({ limit: "500" });
    const oldest = Math.min(...all.map((row) => row.createdAt));
    const hour = 3_600_000;
    const from = Math.floor(oldest / hour) * hour - 2 * hour;
    const reply = await stats({ bucket: "hour", from: String(from + 1), to: String(from + 5 * hour - 1) });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const data = reply.body.data as {
      bucket: string;
      from: number;
      to: number;
      buckets: { start: number; counts: Record<string, number>; spendWei: string; heldWei: string }[];
    };
    assert.equal(data.bucket, "hour");
    assert.equal(data.from, from, "from rounded down to the hour");
    assert.equal(data.to, from + 5 * hour, "to rounded up");
    assert.deepEqual(
      data.buckets.map((b) => b.start),
      [0, 1, 2, 3, 4].map((n) => from + n * hour),
    );
    const total = { pending: 0, mined: 0, expired: 0, refused: 0 };
    let spend = 0n;
    let held = 0n;
    for (const bucket of data.buckets) {
      for (const status of Object.keys(total) as (keyof typeof total)[]) total[status] += bucket.counts[status] ?? 0;
      spend += BigInt(bucket.spendWei);
      held += BigInt(bucket.heldWei);
    }
    assert.deepEqual(total, { pending: 5, mined: 1, expired: 2, refused: 3 });
    assert.equal(spend, 123_456_789n, "the mined operation's actual cost");
    assert.equal(held, 5n * maxChargeWei({ ...PLAIN_GAS, maxFeePerGas: CHEAP }), "the pending ones' worst case");
    // Each row is in the bucket of its creation hour.
    for (const bucket of data.buckets) {
      const inside = all.filter((row) => row.createdAt >= bucket.start && row.createdAt < bucket.start + hour);
      assert.equal(
        Object.values(bucket.counts).reduce((a, b) => a + b, 0),
        inside.length,
      );
    }
  });

  test("by day by default, 30 days to now", async () => {
    const reply = await stats({});
    assert.equal(reply.status, 200);
    const data = reply.body.data as { bucket: string; from: number; to: number; buckets: unknown[] };
    const day = 86_400_000;
    assert.equal(data.bucket, "day");
    assert.equal(data.to, Math.ceil(clockMs / day) * day);
    assert.equal(data.buckets.length, 30);
  });

  test("bad ranges are refused", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ bucket: "week" }, "bucket must be one of hour, day"],
      [{ from: "x" }, "from must be a time in milliseconds since the epoch: a whole number"],
      [{ from: "7200000", to: "3600000" }, "from must not be after to"],
      [
        { bucket: "hour", from: "0", to: String(1001 * 3_600_000) },
        "from and to span 1001 buckets of one hour; at most 1000",
      ],
    ];
    for (const [query, message] of cases) {
      assert.deepEqual((await stats(query)).body, { statusCode: 400, message }, JSON.stringify(query));
    }
    assert.equal((await stats({ bucket: "hour", from: "0", to: String(1000 * 3_600_000) })).status, 200);
  });
});
