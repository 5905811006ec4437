// The native token's dollar price from a Chainlink-style feed on anvil (the project's FixedPriceAggregator, whose answer
// and date a test sets): USD rules use the feed's answer and the record keeps it, settlement counts the actual cost at
// that price, a new answer is used once the kept round expires, and a stale, non-positive or unreadable price refuses
// (on v0.6 with the `0x` reason, on v0.7 with -32003) without signing or reserving anything.
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import { type Address, encodeFunctionData, getContractAddress, parseAbi, parseEventLogs } from "viem";
import { entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { ENTRY_POINT_V07_ADDRESS } from "../../src/bindings/entryPoints/entryPointV07";
import { worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import { fixedPriceAggregatorArtifact } from "../../src/bindings/paymasters/tokenArtifacts";
import { ROUND_TTL_MS } from "../../src/chain/nativeUsdPrice";
import type { ChainConfig } from "../../src/config";
import { startSettlement } from "../../src/settlement/watcher";
import { usdUnitsToDollars, weiToUsdUnits } from "../../src/sponsorship/usdAmount";
import { listSponsorships } from "../../src/storage/sponsorships";
import { anvilKeys, handleOps, type Sponsored, signByAccount, startSponsoredChain } from "../contracts/fixtures";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  ONE_ETHER,
  requestSponsorship,
  TARGET,
} from "../helpers/chainApp";
import { addPolicy, linkFundingWallet, rpc } from "../helpers/dappSetup";
import { userOpV07 } from "../helpers/userOps";

const MAX_AGE_SECONDS = 3600;
const DOLLARS = 10n ** 8n; // the feed's 8 decimals
let env: Sponsored;
let feed: Address;
let app: ChainApp;
let offsetMs = 0;
const serviceNow = () => Date.now() + offsetMs;
/** A service whose chain 31337 reads its native token price from `aggregator`. */
async function service(aggregator: Address): Promise<TestApp> {
  const chains = new Map<number, ChainConfig>([
    [
      31337,
      {
        chainId: 31337,
        name: "local",
        rpcUrl: env.anvil.rpcUrl,
        nativeUsdPrice: { aggregator, maxAgeSeconds: MAX_AGE_SECONDS },
      },
    ],
  ]);
  return startTestApp({ signer: env.serviceSigner, chains, now: serviceNow });
}

before(async () => {
  env = await startSponsoredChain();
  const wallet = env.wallet(anvilKeys.owner);
  const nonce = await env.publicClient.getTransactionCount({ address: wallet.account.address });
  const hash = await wallet.deployContract({
    abi: fixedPriceAggregatorArtifact.abi,
    bytecode: fixedPriceAggregatorArtifact.bytecode,
    args: [wallet.account.address, 8, "ETH / USD", 2_000n * DOLLARS],
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
  feed = getContractAddress({ from: wallet.account.address, nonce: BigInt(nonce) });
  const t = await service(feed);
  app = {
    env,
    t,
    advance: (ms) => {
      offsetMs += ms;
    },
    close: () => t.close(),
  };
});
after(async () => {
  try {
    await app?.close();
  } finally {
    await env?.anvil.stop();
  }
});

/** A new answer dated `ageSeconds` before the service's clock; the next request reads it (the kept round expired). */
async function setRound(answer: bigint, ageSeconds = 0) {
  const updatedAt = BigInt(Math.floor(serviceNow() / 1000) - ageSeconds);
  const hash = await env.wallet(anvilKeys.owner).writeContract({
    address: feed,
    abi: fixedPriceAggregatorArtifact.abi,
    functionName: "setRoundData",
    args: [answer, updatedAt],
  });
  await env.publicClient.waitForTransactionReceipt({ hash });
  app.advance(ROUND_TTL_MS);
}

let dapp: Dapp;
let limitId: string;
beforeEach(async () => {
  await setRound(2_000n * DOLLARS);
  dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
  limitId = await addPolicy(
    app.t,
    dapp,
    "PAYMASTER_SA_LIMIT",
    { type: "PAYMASTER", cycleDuration: { value: 1, unit: "month" }, threshold: 1000, thresholdType: "USD" },
    "dollars",
  );
  await addPolicy(app.t, dapp, "MAX_COST_PER_OP", { threshold: 500, thresholdType: "USD" }, "per op");
});

const used = async () => {
  const [row] = await app.t.db.query<{ used: string }>(
    "SELECT COALESCE(SUM(used), 0)::text AS used FROM limit_usage WHERE policy_id = $1",
    [limitId],
  );
  return BigInt(row?.used ?? "0");
};

describe("a USD limit priced by the feed", () => {
  test("signed at the feed's answer, kept on the record; settlement counts the actual cost at that price", async () => {
    await deposit(app, ONE_ETHER);
    const { op, owner } = await freshOperation(app);
    const answer = await requestSponsorship(app.t, dapp, op);
    assert.equal(answer.reason, undefined);
    const price = { answer: 2_000n * DOLLARS, decimals: 8 };
    assert.equal(await used(), weiToUsdUnits(worstCaseCostWei(op), price));
    const [record] = await listSponsorships(app.t.db, dapp.paymasterId);
    assert.equal(record?.native_usd_price, "2000");

    // The price moves before the operation runs: settlement still uses the price it was signed at.
    await setRound(3_000n * DOLLARS);
    const receipt = await handleOps(env, [
      await signByAccount(env, { ...op, paymasterAndData: answer.paymasterAndData }, owner),
    ]);
    const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
    assert.ok(event);
    const settlement = startSettlement(app.t.ctx, { poll: false });
    try {
      await settlement.settleOnce();
    } finally {
      await settlement.stop();
    }
    assert.equal(await used(), weiToUsdUnits(event.args.actualGasCost, price));
    assert.ok(event.args.actualGasCost < worstCaseCostWei(op));
  });

  test("within the few seconds a round is kept, a new answer is not read yet: one read, not one per request", async () => {
    const { op } = await freshOperation(app);
    assert.equal((await requestSponsorship(app.t, dapp, op)).reason, undefined);
    await setRound(2_200n * DOLLARS);
    app.advance(-ROUND_TTL_MS); // back to just after the first read: the kept round is still fresh
    const second = await freshOperation(app);
    assert.equal((await requestSponsorship(app.t, dapp, second.op)).reason, undefined);
    app.advance(ROUND_TTL_MS);
    const third = await freshOperation(app);
    assert.equal((await requestSponsorship(app.t, dapp, third.op)).reason, undefined);
    const records = await listSponsorships(app.t.db, dapp.paymasterId);
    assert.deepEqual(
      records.map((r) => r.native_usd_price),
      ["2000", "2000", "2200"],
    );
  });

  test("a new answer is used once the kept round has expired", async () => {
    await setRound(2_500n * DOLLARS);
    const { op } = await freshOperation(app);
    assert.equal((await requestSponsorship(app.t, dapp, op)).reason, undefined);
    const [record] = await listSponsorships(app.t.db, dapp.paymasterId);
    assert.equal(record?.native_usd_price, "2500");
    assert.equal(
      usdUnitsToDollars(await used()),
      usdUnitsToDollars(weiToUsdUnits(worstCaseCostWei(op), { answer: 2_500n * DOLLARS, decimals: 8 })),
    );
  });
});

describe("no usable price: refused, nothing signed or reserved", () => {
  const refusedV06 = async (reason: RegExp) => {
    const { op } = await freshOperation(app);
    const answer = await requestSponsorship(app.t, dapp, op);
    assert.equal(answer.paymasterAndData, "0x");
    assert.match(answer.reason ?? "", reason);
    assert.equal(await used(), 0n);
    const [record] = await listSponsorships(app.t.db, dapp.paymasterId);
    assert.deepEqual([record?.sponsored, record?.native_usd_price], [false, null]);
  };

  test("an answer older than maxAgeSeconds is stale", async () => {
    await setRound(2_000n * DOLLARS, MAX_AGE_SECONDS + 60);
    await refusedV06(
      new RegExp(
        `^Cost cap "per op" \\(USD\\) cannot be checked: The native token price is stale: the native token price ` +
          `feed ${feed} of chain 31337 was last updated \\d+ s ago, more than the 3600 s allowed`,
        "i",
      ),
    );
  });

  test("an answer just within maxAgeSeconds is used", async () => {
    await setRound(2_000n * DOLLARS, MAX_AGE_SECONDS - 60);
    const { op } = await freshOperation(app);
    assert.equal((await requestSponsorship(app.t, dapp, op)).reason, undefined);
  });

  test("a zero answer is no price", async () => {
    await setRound(0n);
    await refusedV06(/cannot be checked: No usable native token price: .* answers 0$/);
  });

  test("a negative answer is no price", async () => {
    await setRound(-1n);
    await refusedV06(/answers -1$/);
  });

  test("on EntryPoint v0.7: -32003 with the reason", async () => {
    await setRound(2_000n * DOLLARS, MAX_AGE_SECONDS * 2);
    const reply = await rpc(app.t, dapp, "pm_getPaymasterData", [
      userOpV07("0x4df23b78543f5c2f9cbcdf09956288b3e97bb9a4", 1, {
        // SimpleAccount's execute(TARGET, 0, 0x): a call the dApp whitelisted, so only the price decides.
        callData: encodeFunctionData({
          abi: parseAbi(["function execute(address dest, uint256 value, bytes func)"]),
          functionName: "execute",
          args: [TARGET, 0n, "0x"],
        }),
        signature: "0x",
      }),
      ENTRY_POINT_V07_ADDRESS,
      "0x7a69",
    ]);
    assert.equal(reply.body.error?.code, -32003, JSON.stringify(reply.body));
    assert.match(reply.body.error.message, /The native token price is stale/);
  });

  test("a feed that cannot be read (no contract at its address) refuses with the read's failure", async () => {
    const t = await service("0x000000000000000000000000000000000000dEaD");
    try {
      const other = await t.dapp();
      await linkFundingWallet(t, other);
      await addPolicy(t, other, "WALLET_DEPLOYMENT", {});
      await addPolicy(t, other, "MAX_COST_PER_OP", { threshold: 5, thresholdType: "USD" }, "per op");
      const { op } = await freshOperation(app);
      const answer = await requestSponsorship(t, other, op);
      assert.equal(answer.paymasterAndData, "0x");
      assert.match(
        answer.reason ?? "",
        /^Cost cap "per op" \(USD\) cannot be checked: No usable native token price: reading the native token price feed 0x000000000000000000000000000000000000dEaD of chain 31337 failed/,
      );
    } finally {
      await t.close();
    }
  });
});
