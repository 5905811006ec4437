// GET /sponsorships/stats in dollars: on a chain with a fixed native token price, operations signed with and without a
// USD rule (so with and without a recorded price), mined through the storage function settlement runs or left
// pending; spendUsd and heldUsd checked exactly per hour (real hours: created_at is the database's clock). A chain
// whose price feed cannot be read (no RPC) answers usdComplete false, and a chain without a price no dollar field.
// Every answer is checked against /openapi.json.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { TSchema } from "typebox";
import { MANAGEMENT_PREFIX } from "../../src/app";
import { maxChargeWei } from "../../src/bindings/entryPoints/prefund";
import type { NativeUsdPrice } from "../../src/chain/nativeUsdPrice";
import type { ChainConfig } from "../../src/config";
import { problemOf } from "../../src/schemas/validate";
import { usdUnitsToDollars, weiToUsdUnits } from "../../src/sponsorship/usdAmount";
import { openCursor, settleRange } from "../../src/storage/settlement";
import { startTestApp, TEST_CHAINS } from "../helpers/app";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS, userOpV06 } from "../helpers/userOps";

const HOUR = 3_600_000;
const CURRENT: NativeUsdPrice = { answer: 123_456n, decimals: 2 }; // 1234.56, the chains file's fixed price
const RECORDED: NativeUsdPrice = { answer: 2000n, decimals: 0 }; // what the USD rule read when it signed (see below)
const FEE = 1_000_000_000n;
const WORST_CASE = maxChargeWei({ ...PLAIN_GAS, maxFeePerGas: FEE });
const SENDER = "0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4";

const op = (nonce: number) => userOpV06(SENDER, nonce, { maxFeePerGas: FEE.toString() });

/** An app on `chains` (the real clock: the database's writes created_at), one dApp, and what its calls need. */
async function world(chains: ReadonlyMap<number, ChainConfig>) {
  const t = await startTestApp({ chains });
  const dapp = await t.dapp();
  await linkFundingWallet(t, dapp);
  // A cap in the native token: it lets operations through and reads no price.
  await addPolicy(t, dapp, "MAX_COST_PER_OP", { threshold: 1, thresholdType: "NATIVE_ASSET" }, "eth cap");
  const paths = (await t.app.inject({ method: "GET", url: "/openapi.json" })).json().paths;
  const sponsor = async (nonce: number) => {
    const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [
      op(nonce),
      { mode: "SPONSORED", expiryDuration: 36_000 },
    ]);
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const result = reply.body.result as { paymasterAndData: string };
    assert.notEqual(result.paymasterAndData, "0x", JSON.stringify(reply.body));
  };
  const rows = async () => {
    const reply = await t.call("GET", "sponsorships", { token: dapp.token, apiKey: dapp.apiKey });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const schema = paths[`${MANAGEMENT_PREFIX}/sponsorships`].get.responses["200"].content["application/json"]
      .schema as TSchema;
    assert.equal(problemOf(schema, reply.body, "answer"), undefined);
    return reply.body.data as (Record<string, unknown> & { nonce: string; userOpHash: string; createdAt: number })[];
  };
  const hashOf = async (nonce: number) => (await rows()).find((r) => r.nonce === String(nonce))?.userOpHash as string;
  /** Mined, as the watcher records a UserOperationEvent. */
  const mine = async (nonce: number, cost: bigint) => {
    const userOpHash = await hashOf(nonce);
    const { cursor } = await openCursor(t.db, dapp.chainId, "0xgenesis", 10n);
    const block = cursor.lastBlock + 1n;
    await settleRange(t.db, {
      chainId: dapp.chainId,
      fromBlock: block,
      toBlock: block,
      events: [
        {
          userOpHash,
          sender: SENDER,
          nonce: BigInt(nonce),
          success: true,
          actualGasCost: cost,
          actualGasUsed: 150_000n,
          txHash: `0x${nonce.toString(16).padStart(64, "0")}`,
          blockNumber: block,
        },
      ],
      atMs: Date.now(),
      validAfterSkewSeconds: 60,
    });
  };
  /** The stats answer, checked against the documented schema of its 200. */
  const stats = async () => {
    const from = Math.floor(Math.min(...(await rows()).map((r) => r.createdAt)) / HOUR) * HOUR;
    const reply = await t.call("GET", "sponsorships/stats", {
      token: dapp.token,
      apiKey: dapp.apiKey,
      query: { bucket: "hour", from: String(from), to: String(from + 2 * HOUR) },
    });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const schema = paths[`${MANAGEMENT_PREFIX}/sponsorships/stats`].get.responses["200"].content["application/json"]
      .schema as TSchema;
    assert.equal(problemOf(schema, reply.body, "answer"), undefined);
    return reply.body.data as Record<string, unknown> & { buckets: Record<string, unknown>[] };
  };
  return { t, dapp, sponsor, mine, rows, stats };
}

describe("a chain with a fixed price", () => {
  let w: Awaited<ReturnType<typeof world>>;
  before(async () => {
    w = await world(
      new Map([...TEST_CHAINS, [31337, { chainId: 31337, name: "local", nativeUsdPrice: { fixed: "1234.56" } }]]),
    );
    // No USD rule yet, so no price recorded: nonce 0 will be mined, 1 stays pending.
    await w.sponsor(0);
    await w.sponsor(1);
    // A USD cost cap reads the price and the record keeps it: 2 and 4 will be mined, 3 stays pending.
    await addPolicy(w.t, w.dapp, "MAX_COST_PER_OP", { threshold: 10, thresholdType: "USD" }, "usd cap");
    for (const nonce of [2, 3, 4]) await w.sponsor(nonce);
    // The recorded price is the fixed one; as if it had been 2000 when 2 and 3 were signed (a feed that moved since),
    // so that the answer shows which price values which row.
    const changed = await w.t.db.query<{ n: number }>(
      "UPDATE sponsorships SET native_usd_price = 2000 WHERE native_usd_price = 1234.56 AND nonce IN (2, 3) RETURNING 1 AS n",
    );
    assert.equal(changed.length, 2, "the operations signed under the USD cap recorded the price");
    for (const [nonce, cost] of MINED) await w.mine(nonce, cost);
  });
  after(() => w.t.close());

  /** nonce → what it cost when mined. */
  const MINED = new Map([
    [0, 123_456_789n],
    [2, 987_654_321_012n],
    // 7 wei at 1234.56 is 8641.92 × 10^-18 dollar: rounded up to 8642.
    [4, 7n],
  ]);
  const PRICE_OF = new Map([
    [0, CURRENT], // none recorded: the current price
    [1, CURRENT],
    [2, RECORDED],
    [3, RECORDED],
    [4, CURRENT], // recorded, and equal to the current price
  ]);
  const units = (dollars: unknown) => {
    const [whole, fraction = ""] = String(dollars).split(".");
    return BigInt(whole ?? "") * 10n ** 18n + BigInt(fraction.padEnd(18, "0"));
  };

  test("each row at its recorded price, else at the current one, exactly, per bucket", async () => {
    const data = await w.stats();
    assert.equal(data.nativeUsdPrice, "1234.56");
    assert.equal("nativeUsdPriceError" in data, false);
    // created_at is the database's clock: the rows may straddle an hour, so the expected figures are per bucket.
    const expected = new Map<number, { spend: bigint; held: bigint }>();
    for (const row of await w.rows()) {
      const start = Math.floor(row.createdAt / HOUR) * HOUR;
      const bucket = expected.get(start) ?? { spend: 0n, held: 0n };
      const nonce = Number(row.nonce);
      const price = PRICE_OF.get(nonce) as NativeUsdPrice;
      const mined = MINED.get(nonce);
      if (mined !== undefined) bucket.spend += weiToUsdUnits(mined, price);
      else bucket.held += weiToUsdUnits(WORST_CASE, price);
      expected.set(start, bucket);
    }
    for (const b of data.buckets) {
      const want = expected.get(b.start as number) ?? { spend: 0n, held: 0n };
      assert.equal(b.spendUsd, usdUnitsToDollars(want.spend), `spend of ${b.start}`);
      assert.equal(b.heldUsd, usdUnitsToDollars(want.held), `held of ${b.start}`);
      assert.equal(b.usdComplete, true);
    }
    // The whole range, by hand: 123456789 × 1234.56 + 987654321012 × 2000 + 8642, and 302 µETH at each price.
    const total = (field: string) => data.buckets.reduce((sum, b) => sum + units(b[field]), 0n);
    assert.equal(usdUnitsToDollars(total("spendUsd")), "0.00197546105684607");
    assert.equal(WORST_CASE, 302_000_000_000_000n);
    assert.equal(usdUnitsToDollars(total("heldUsd")), "0.97683712");
    assert.equal(
      data.buckets.reduce((n, b) => n + (b.counts as { mined: number }).mined, 0),
      3,
    );
  });

  test("a ledger row that recorded a price shows it and its dollars; the others no dollar field", async () => {
    const byNonce = new Map((await w.rows()).map((row) => [row.nonce, row]));
    const usdOf = (nonce: string) => {
      const row: Record<string, unknown> = byNonce.get(nonce) ?? {};
      return [row.nativeUsdPrice, row.worstCaseUsd, row.actualUsd];
    };
    // 302 µETH × 2000 = 0.604; 987654321012 wei × 2000 = 0.001975308642024; pending: no actual cost yet.
    assert.deepEqual(usdOf("2"), ["2000", "0.604", "0.001975308642024"]);
    assert.deepEqual(usdOf("3"), ["2000", "0.604", null]);
    assert.deepEqual(usdOf("4"), ["1234.56", "0.37283712", "0.000000000000008642"]);
    for (const nonce of ["0", "1"]) {
      const keys = Object.keys(byNonce.get(nonce) ?? {});
      assert.deepEqual(
        keys.filter((key) => key.toLowerCase().includes("usd")),
        [],
        `nonce ${nonce} recorded no price`,
      );
    }
  });
});

describe("a chain whose price cannot be read now", () => {
  let w: Awaited<ReturnType<typeof world>>;
  before(async () => {
    // A feed on a chain with no RPC: no price can be read, and no USD rule could sign, so no row records one.
    const feed = { aggregator: `0x${"fe".repeat(20)}`, maxAgeSeconds: 3600 };
    w = await world(new Map([...TEST_CHAINS, [31337, { chainId: 31337, name: "local", nativeUsdPrice: feed }]]));
    await w.sponsor(0);
    await w.mine(0, 5_000n);
  });
  after(() => w.t.close());

  test("the dollars leave the unpriced rows out and say so", async () => {
    const data = await w.stats();
    assert.equal(data.nativeUsdPrice, null);
    assert.match(data.nativeUsdPriceError as string, /chain 31337 has no RPC/);
    const spent = data.buckets.filter((b) => b.spendWei !== "0");
    assert.equal(spent.length, 1);
    assert.deepEqual([spent[0]?.spendWei, spent[0]?.spendUsd, spent[0]?.usdComplete], ["5000", "0", false]);
    const idle = data.buckets.filter((b) => b.spendWei === "0");
    assert.deepEqual(
      idle.map((b) => [b.spendUsd, b.heldUsd, b.usdComplete]),
      idle.map(() => ["0", "0", true]),
      "nothing to value",
    );
  });
});

describe("a chain without a price", () => {
  let w: Awaited<ReturnType<typeof world>>;
  before(async () => {
    w = await world(TEST_CHAINS);
    await w.sponsor(0);
    await w.mine(0, 5_000n);
  });
  after(() => w.t.close());

  test("answers no dollar field", async () => {
    const data = await w.stats();
    assert.equal("nativeUsdPrice" in data, false);
    assert.equal("nativeUsdPriceError" in data, false);
    for (const b of data.buckets) assert.deepEqual(Object.keys(b), ["start", "counts", "spendWei", "heldWei"]);
    assert.deepEqual(
      data.buckets.map((b) => b.spendWei).filter((wei) => wei !== "0"),
      ["5000"],
    );
  });
});
