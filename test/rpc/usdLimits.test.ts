// USD spending limits and cost caps, and the minute, week and month cycles, in process with real storage, on a chain
// whose native token price is a fixed rate (the price feed is test/rpc/usdPriceFeed.test.ts): what a USD rule
// reserves and refuses on every EntryPoint version, exactly N signed under concurrency, the price kept on the record,
// and cycles that turn at the minute, at Monday 00:00 UTC and on the 1st of the month.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ENTRY_POINT_V07_ADDRESS, ENTRY_POINT_V08_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { worstCaseCostWei, worstCaseCostWeiV07 } from "../../src/bindings/entryPoints/prefund";
import {
  PAYMASTER_POST_OP_GAS_LIMIT_V07,
  PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
} from "../../src/bindings/paymasters/verifyingPaymasterGasV07";
import type { ChainConfig } from "../../src/config";
import { usdUnitsToDollars, weiToUsdUnits } from "../../src/sponsorship/usdAmount";
import { listSponsorships } from "../../src/storage/sponsorships";
import { type Dapp, startTestApp, TEST_CHAINS, type TestApp } from "../helpers/app";
import { addPolicy, fundedDapp, rpc } from "../helpers/dappSetup";
import { PLAIN_GAS, userOpV06, userOpV07 } from "../helpers/userOps";

const PRICE = { answer: 123_456n, decimals: 2 }; // 1234.56 USD per ETH
/** The service's clock: a leap day, 23:00 UTC, a Tuesday. Tests move it. */
let clockMs = Date.UTC(2028, 1, 29, 23, 0);
let t: TestApp;
before(async () => {
  const chains = new Map<number, ChainConfig>([
    ...TEST_CHAINS,
    [31337, { chainId: 31337, name: "local", nativeUsdPrice: { fixed: "1234.56" } }],
  ]);
  t = await startTestApp({ chains, now: () => clockMs });
});
after(() => t.close());

const SENDER = "0x4dF23B78543F5c2F9CBCDF09956288B3e97bb9a4";
/** 0.00029 ETH, which is 0.3580224 USD at 1234.56. */
const COST_WEI = worstCaseCostWei(PLAIN_GAS);
const COST_USD = weiToUsdUnits(COST_WEI, PRICE);

let nonce = 0;
const op = (sender = SENDER) => userOpV06(sender, ++nonce);
type Answer = { paymasterAndData: string; reason?: string };
const sponsor = async (dapp: Dapp, userOp = op()): Promise<Answer> => {
  const reply = await rpc(t, dapp, "pm_sponsorUserOperation", [userOp, { mode: "SPONSORED" }]);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.result as Answer;
};
const signed = (answer: Answer) => answer.paymasterAndData !== "0x";

async function dappWith(policies: [string, Record<string, unknown>][]) {
  const dapp = await fundedDapp(t, { walletDeployment: true });
  for (const [policyType, policyData] of policies) await addPolicy(t, dapp, policyType, policyData, "cap");
  return dapp;
}
const usdLimit = (threshold: number, cycleDuration: unknown = { value: 1, unit: "day" }, type = "PAYMASTER") =>
  ["PAYMASTER_SA_LIMIT", { type, cycleDuration, threshold, thresholdType: "USD" }] as [string, Record<string, unknown>];
const usage = async (dapp: Dapp) => {
  const reply = await t.call("GET", "paymaster-policy/usage", { token: dapp.token, apiKey: dapp.apiKey });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  return reply.body.data as Record<string, unknown>[];
};

test("the conversion the tests rely on: 0.00029 ETH at 1234.56 USD is 0.3580224 USD", () => {
  assert.equal(usdUnitsToDollars(COST_USD), "0.3580224");
});

describe("USD spending limits", () => {
  test("reserve the worst case in dollars: exactly what fits is signed, the refusal gives dollars, ether and price", async () => {
    const dapp = await dappWith([usdLimit(1)]);
    const answers = [await sponsor(dapp), await sponsor(dapp), await sponsor(dapp)];
    assert.deepEqual(answers.map(signed), [true, true, false]);
    assert.equal(
      answers[2]?.reason,
      'Spending limit "cap" (PAYMASTER, USD) reached: 0.7160448 of 1 USD used in the current cycle; this operation ' +
        "may cost up to 0.3580224 USD (0.00029 ETH at 1234.56 USD)",
    );
    const [row] = await usage(dapp);
    assert.deepEqual([row?.thresholdType, row?.used, row?.remaining], ["USD", "0.7160448", "0.2839552"]);
    // Every answer that read the price keeps it, the refusal as well as the signatures.
    const records = await listSponsorships(t.db, dapp.paymasterId);
    assert.deepEqual(
      records.map((r) => [r.sponsored, r.native_usd_price]),
      [
        [true, "1234.56"],
        [true, "1234.56"],
        [false, "1234.56"],
      ],
    );
  });

  test("SMART_ACCOUNT: dollars per sender", async () => {
    const dapp = await dappWith([usdLimit(0.5, { value: 1, unit: "day" }, "SMART_ACCOUNT")]);
    const other = "0x00000000000000000000000000000000000000aa";
    assert.ok(signed(await sponsor(dapp)));
    assert.ok(!signed(await sponsor(dapp)));
    assert.ok(signed(await sponsor(dapp, op(other))));
  });

  test("a limit without a USD rule does not read the price: the record has none", async () => {
    const dapp = await dappWith([
      ["PAYMASTER_SA_LIMIT", { type: "PAYMASTER", cycleDuration: "1 day", threshold: 5, thresholdType: "COUNT" }],
    ]);
    assert.ok(signed(await sponsor(dapp)));
    const [record] = await listSponsorships(t.db, dapp.paymasterId);
    assert.equal(record?.native_usd_price, null);
  });

  test("50 concurrent requests against a USD limit with room for exactly 7: exactly 7 are signed", async () => {
    const threshold = Number(usdUnitsToDollars(7n * COST_USD)); // 2.5061568 USD
    const dapp = await dappWith([usdLimit(threshold)]);
    const senders = Array.from({ length: 50 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, "0")}`);
    const answers = await Promise.all(senders.map((sender) => sponsor(dapp, op(sender))));
    assert.equal(answers.filter(signed).length, 7);
    assert.equal((await usage(dapp))[0]?.used, "2.5061568");
    const records = await listSponsorships(t.db, dapp.paymasterId);
    assert.equal(records.filter((r) => r.sponsored).length, 7);
  });
});

describe("USD cost caps", () => {
  test("an operation is compared in dollars, its cost rounded up: at the cap passes, a hair above is refused", async () => {
    const atCap = await dappWith([["MAX_COST_PER_OP", { threshold: 0.3580224, thresholdType: "USD" }]]);
    assert.ok(signed(await sponsor(atCap)));
    const below = await dappWith([["MAX_COST_PER_OP", { threshold: 0.3580223, thresholdType: "USD" }]]);
    const refused = await sponsor(below);
    assert.equal(
      refused.reason,
      'Cost cap "cap" exceeded: this operation may cost up to 0.3580224 USD (0.00029 ETH at 1234.56 USD), above the ' +
        "cap of 0.3580223 USD per operation",
    );
    const [record] = await listSponsorships(t.db, below.paymasterId);
    assert.equal(record?.native_usd_price, "1234.56");
  });
});

describe("EntryPoint v0.7 and v0.8: the same USD rules, on the version's own worst case", () => {
  const v07 = () => userOpV07(SENDER, ++nonce, { signature: "0x" });
  const costV07 = weiToUsdUnits(
    worstCaseCostWeiV07({
      verificationGasLimit: 200_000n,
      callGasLimit: 100_000n,
      paymasterVerificationGasLimit: PAYMASTER_VERIFICATION_GAS_LIMIT_V07,
      paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS_LIMIT_V07,
      preVerificationGas: 50_000n,
      maxFeePerGas: 10n ** 9n,
    }),
    PRICE,
  );
  for (const [version, entryPoint] of [
    ["0.7", ENTRY_POINT_V07_ADDRESS],
    ["0.8", ENTRY_POINT_V08_ADDRESS],
  ] as const) {
    const getData = (dapp: Dapp) => rpc(t, dapp, "pm_getPaymasterData", [v07(), entryPoint, "0x7a69"]);

    test(`v${version}: a USD limit with room for one operation signs one, then -32003 naming the limit`, async () => {
      const dapp = await dappWith([usdLimit(Number(usdUnitsToDollars(costV07)))]);
      const first = await getData(dapp);
      assert.equal(first.body.error, undefined, JSON.stringify(first.body));
      const second = await getData(dapp);
      assert.equal(second.body.error?.code, -32003, JSON.stringify(second.body));
      assert.match(second.body.error.message, /Spending limit "cap" \(PAYMASTER, USD\) reached/);
      assert.equal((await usage(dapp))[0]?.used, usdUnitsToDollars(costV07));
    });

    test(`v${version}: a USD cap below the worst case: -32003 with the dollars`, async () => {
      // Half the worst case, whatever our signed paymaster limits add to it.
      const threshold = Number(usdUnitsToDollars(costV07)) / 2;
      const dapp = await dappWith([["MAX_COST_PER_OP", { threshold, thresholdType: "USD" }]]);
      const reply = await getData(dapp);
      assert.equal(reply.body.error?.code, -32003, JSON.stringify(reply.body));
      assert.match(
        reply.body.error.message,
        new RegExp(`may cost up to ${usdUnitsToDollars(costV07).replace(".", "\\.")} USD`),
      );
    });
  }
});

describe("cycles", () => {
  const countLimit = (cycleDuration: unknown) =>
    ["PAYMASTER_SA_LIMIT", { type: "PAYMASTER", cycleDuration, threshold: 1, thresholdType: "COUNT" }] as [
      string,
      Record<string, unknown>,
    ];

  test("minute: a new cycle 60 s after the anchor", async () => {
    const dapp = await dappWith([countLimit({ value: 1, unit: "minute" })]);
    assert.ok(signed(await sponsor(dapp)));
    clockMs += 59_999;
    assert.ok(!signed(await sponsor(dapp)), "still the same minute");
    clockMs += 1;
    assert.ok(signed(await sponsor(dapp)), "the next minute");
    const [row] = await usage(dapp);
    assert.equal(row?.durationInMs, 60_000);
  });

  test("month: the first cycle ends on the 1st at 00:00 UTC, the next is the whole calendar month", async () => {
    clockMs = Date.UTC(2028, 1, 29, 23, 0); // leap day
    const dapp = await dappWith([usdLimit(0.5, { value: 1, unit: "month" })]);
    const [first] = await usage(dapp);
    assert.deepEqual(
      [first?.startTimeInEpoch, first?.durationInMs],
      [Date.UTC(2028, 1, 29, 23, 0), Date.UTC(2028, 2, 1) - Date.UTC(2028, 1, 29, 23, 0)],
    );
    assert.ok(signed(await sponsor(dapp)));
    clockMs = Date.UTC(2028, 2, 1) - 1;
    assert.ok(!signed(await sponsor(dapp)), "29 February 23:59:59.999 is still February");
    clockMs = Date.UTC(2028, 2, 1);
    assert.ok(signed(await sponsor(dapp)), "1 March starts a new cycle");
    const [row] = await usage(dapp);
    assert.deepEqual(
      [row?.startTimeInEpoch, row?.durationInMs, row?.used],
      [Date.UTC(2028, 2, 1), 31 * 86_400_000, "0.3580224"],
    );
  });

  test("week, set by the limit update's text form: cycles turn on Monday 00:00 UTC", async () => {
    clockMs = Date.UTC(2028, 2, 8, 15); // Wednesday 8 March 2028
    const dapp = await dappWith([countLimit({ value: 1, unit: "day" })]);
    const [{ policyId } = {}] = await usage(dapp);
    const update = await t.call("PATCH", `paymaster-policy/limit/${policyId}`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { cycleDuration: "1 week" },
    });
    assert.equal(update.status, 200, JSON.stringify(update.body));
    assert.ok(signed(await sponsor(dapp)));
    clockMs = Date.UTC(2028, 2, 12, 23, 59); // Sunday
    assert.ok(!signed(await sponsor(dapp)), "Sunday is still the same week");
    clockMs = Date.UTC(2028, 2, 13); // Monday 00:00 UTC
    assert.ok(signed(await sponsor(dapp)), "Monday starts a new cycle");
    const [row] = await usage(dapp);
    assert.deepEqual([row?.startTimeInEpoch, row?.durationInMs], [Date.UTC(2028, 2, 13), 7 * 86_400_000]);
  });
});

describe("policies in USD through the management API", () => {
  test("a USD limit and a USD cap are stored as given and listed with their cycle", async () => {
    clockMs = Date.UTC(2028, 3, 10, 12);
    const dapp = await dappWith([usdLimit(25.5, "2 weeks")]);
    const reply = await t.call("GET", "paymaster-policy", { token: dapp.token, apiKey: dapp.apiKey });
    const limit = (reply.body.data as { policyType: string; policyData: Record<string, unknown> }[]).find(
      (p) => p.policyType === "PAYMASTER_SA_LIMIT",
    );
    assert.deepEqual(limit?.policyData, {
      type: "PAYMASTER",
      cycleDuration: { value: 2, unit: "week" },
      threshold: 25.5,
      thresholdType: "USD",
      startTimeInEpoch: Date.UTC(2028, 3, 10, 12),
      // Monday 10 April 2028 was the anchor's week start: two weeks from it end on Monday 24 April.
      durationInMs: Date.UTC(2028, 3, 24) - Date.UTC(2028, 3, 10, 12),
    });
  });

  test("a limit update to USD restarts the cycle, so ether and dollars never share a usage", async () => {
    clockMs = Date.UTC(2028, 3, 11, 9);
    const dapp = await dappWith([
      [
        "PAYMASTER_SA_LIMIT",
        { type: "PAYMASTER", cycleDuration: "1 day", threshold: 1, thresholdType: "NATIVE_ASSET" },
      ],
    ]);
    assert.ok(signed(await sponsor(dapp)));
    const [{ policyId, used } = {}] = await usage(dapp);
    assert.equal(used, "0.00029");
    clockMs += 1;
    const update = await t.call("PATCH", `paymaster-policy/limit/${policyId}`, {
      token: dapp.token,
      apiKey: dapp.apiKey,
      body: { thresholdType: "USD", threshold: 0.5 },
    });
    assert.equal(update.status, 200, JSON.stringify(update.body));
    const [row] = await usage(dapp);
    assert.deepEqual([row?.thresholdType, row?.threshold, row?.used], ["USD", 0.5, "0"]);
    assert.ok(signed(await sponsor(dapp)));
    assert.ok(!signed(await sponsor(dapp)), "0.3580224 of 0.5 USD used: a second does not fit");
  });

  test("on a chain without a native token price, USD is refused when the rule is set", async () => {
    const dapp = await t.dapp({ chainId: 80002 });
    for (const [policyType, policyData] of [
      usdLimit(5),
      ["MAX_COST_PER_OP", { threshold: 5, thresholdType: "USD" }] as [string, Record<string, unknown>],
    ]) {
      const reply = await t.call("POST", "paymaster-policy", {
        token: dapp.token,
        apiKey: dapp.apiKey,
        body: { name: `usd ${policyType}`, policyType, policyData },
      });
      assert.deepEqual(
        [reply.status, reply.body.message],
        [
          400,
          "policyData.thresholdType USD needs the native token's dollar price, which the chains file does not give for " +
            "chain 80002 (nativeUsdPrice): use NATIVE_ASSET or configure the price",
        ],
      );
    }
  });
});
