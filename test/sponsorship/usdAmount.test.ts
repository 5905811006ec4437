// Dollars for USD rules, exactly: wei to USD units (10^-18 dollar) at a price with any number of decimals, rounded
// up; dollar thresholds read as written; prices as decimal texts both ways; one price read per request.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type NativeUsdPrice, type PriceReading, parsePriceText } from "../../src/chain/nativeUsdPrice";
import {
  dollarsToUsdUnits,
  priceText,
  RequestPrice,
  usdUnitsToDollars,
  weiToUsdUnits,
} from "../../src/sponsorship/usdAmount";

const ETHER = 10n ** 18n;
/** 2,000 dollars per ether, as a Chainlink ETH/USD feed gives it (8 decimals). */
const FEED_2000: NativeUsdPrice = { answer: 2_000n * 10n ** 8n, decimals: 8 };

describe("weiToUsdUnits: wei × price, rounded up to a whole 10^-18 dollar", () => {
  const cases: { name: string; wei: bigint; price: NativeUsdPrice; expected: bigint }[] = [
    { name: "one ether at 2,000 USD is 2,000 dollars", wei: ETHER, price: FEED_2000, expected: 2_000n * ETHER },
    { name: "nothing costs nothing", wei: 0n, price: FEED_2000, expected: 0n },
    { name: "one wei at 2,000 USD is 2,000 units exactly", wei: 1n, price: FEED_2000, expected: 2_000n },
    {
      name: "a price with decimals: 1 wei at 1234.56 USD is 1234.56 units, rounded up to 1235",
      wei: 1n,
      price: { answer: 123_456n, decimals: 2 },
      expected: 1_235n,
    },
    {
      name: "100 wei at 1234.56 USD: exactly 123456 units, nothing to round",
      wei: 100n,
      price: { answer: 123_456n, decimals: 2 },
      expected: 123_456n,
    },
    {
      name: "a price below one unit per wei (0.5 USD per token): 3 wei is 1.5 units, rounded up to 2",
      wei: 3n,
      price: { answer: 5n, decimals: 1 },
      expected: 2n,
    },
    {
      name: "18-decimal feed: 0.00029 ether at 3012.345678901234567891 USD",
      wei: 290_000n * 10n ** 9n,
      price: { answer: 3_012_345_678_901_234_567_891n, decimals: 18 },
      // 290000e9 × 3012345678901234567891 / 1e18 = 873580246881358024.68839 units (0.8736 USD) → rounded up
      expected: 873_580_246_881_358_025n,
    },
    {
      name: "the largest cost an operation can have stays exact (no float anywhere)",
      wei: 2n ** 200n,
      price: FEED_2000,
      expected: 2n ** 200n * 2_000n,
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(weiToUsdUnits(c.wei, c.price), c.expected));

  test("rounding never lowers a cost: units × 10^decimals ≥ wei × answer, by less than one unit", () => {
    const price = { answer: 299_999_999_999n, decimals: 8 };
    for (const wei of [1n, 7n, 123_456_789n, 10n ** 15n + 3n]) {
      const units = weiToUsdUnits(wei, price);
      const exact = wei * price.answer;
      assert.ok(units * 10n ** 8n >= exact);
      assert.ok((units - 1n) * 10n ** 8n < exact);
    }
  });
});

describe("dollar amounts", () => {
  test("a threshold in dollars is read as written, not as its binary neighbour", () => {
    assert.equal(dollarsToUsdUnits(10), 10n * ETHER);
    assert.equal(dollarsToUsdUnits(0.1), ETHER / 10n);
    assert.equal(dollarsToUsdUnits(0.30000000000000004), 300_000_000_000_000_040n);
    assert.equal(dollarsToUsdUnits(1e-19), 0n, "below one unit: dropped (the threshold rounds down)");
  });
  test("units print as dollars with every significant digit", () => {
    assert.equal(usdUnitsToDollars(2_000n * ETHER), "2000");
    assert.equal(usdUnitsToDollars(ETHER / 4n), "0.25");
    assert.equal(usdUnitsToDollars(1n), "0.000000000000000001");
  });
});

describe("price texts", () => {
  const cases: [string, NativeUsdPrice | undefined][] = [
    ["1234.56", { answer: 123_456n, decimals: 2 }],
    ["3000", { answer: 3_000n, decimals: 0 }],
    ["0.5", { answer: 5n, decimals: 1 }],
    ["0", undefined],
    ["0.000", undefined],
    ["-1", undefined],
    ["1e3", undefined],
    ["1.", undefined],
    ["", undefined],
  ];
  for (const [text, expected] of cases) {
    test(`${JSON.stringify(text)} → ${expected ? `${expected.answer}/10^${expected.decimals}` : "not a price"}`, () =>
      assert.deepEqual(parsePriceText(text), expected));
  }
  test("a feed answer prints as a plain decimal without trailing zeros", () => {
    assert.equal(priceText(FEED_2000), "2000");
    assert.equal(priceText({ answer: 301_234_567_890n, decimals: 8 }), "3012.3456789");
    assert.equal(priceText({ answer: 5n, decimals: 3 }), "0.005");
  });
});

describe("RequestPrice: one read per request, the price used kept for the record", () => {
  test("reads its source once however many rules ask, and keeps what it read", async () => {
    let reads = 0;
    const source = {
      read: async (nowMs: number): Promise<PriceReading> => {
        reads++;
        assert.equal(nowMs, 1234);
        return { ok: true, price: FEED_2000 };
      },
    };
    const price = new RequestPrice(source, 31337, 1234);
    assert.equal(price.used, undefined, "nothing used before a rule asks");
    const [first, second] = await Promise.all([price.read(), price.read()]);
    assert.deepEqual(first, second);
    assert.equal(reads, 1);
    assert.deepEqual(price.used, FEED_2000);
  });
  test("no source: a refusal that names the chain and the setting", async () => {
    const price = new RequestPrice(undefined, 8453, 0);
    assert.deepEqual(await price.read(), {
      ok: false,
      reason: "No native token price is configured for chain 8453 (chains file, nativeUsdPrice)",
    });
    assert.equal(price.used, undefined);
  });
  test("a refused reading is not a price used", async () => {
    const price = new RequestPrice({ read: async () => ({ ok: false, reason: "stale" }) }, 1, 0);
    assert.deepEqual(await price.read(), { ok: false, reason: "stale" });
    assert.equal(price.used, undefined);
  });
});
