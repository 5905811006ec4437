// Settlement on a real chain: operations the service sponsored run through the EntryPoint on anvil, and one pass of
// the watcher settles them to their actual cost (the sponsorship record and the spending limits), releases what expired
// unmined, and resumes after a restart from the block it had reached.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseEventLogs } from "viem";
import type { LocalAccount } from "viem/accounts";
import { entryPointAbi } from "../../src/bindings/entryPoints/entryPoint";
import { maxChargeWei, worstCaseCostWei } from "../../src/bindings/entryPoints/prefund";
import type { UserOperation } from "../../src/bindings/entryPoints/userOperation";
import { EXPIRY_MARGIN_SECONDS } from "../../src/chain/paymasterDeposit";
import { createMetrics } from "../../src/metrics/metrics";
import { type Settlement, startSettlement } from "../../src/settlement/watcher";
import { OutstandingCharges } from "../../src/storage/outstandingCharges";
import { readCursor } from "../../src/storage/settlement";
import { anvilKeys, handleOps, signByAccount } from "../contracts/fixtures";
import type { Dapp } from "../helpers/app";
import { startTestApp } from "../helpers/app";
import {
  type ChainApp,
  chainDapp,
  deposit,
  freshOperation,
  ONE_ETHER,
  requestSponsorship,
  startChainApp,
} from "../helpers/chainApp";
import { addPolicy } from "../helpers/dappSetup";
import { eventually } from "../helpers/eventually";
import { startWebhookServer } from "../helpers/webhookServer";

let app: ChainApp;
let dapp: Dapp;
let settlement: Settlement;
const settlementMetrics = createMetrics();
let policies: { spend: string; count: string };
const fundingAddress = () => app.env.wallet(anvilKeys.fundingWallet).account.address.toLowerCase();

before(async () => {
  app = await startChainApp();
  dapp = await chainDapp(app.t, anvilKeys.fundingWallet);
  await deposit(app, ONE_ETHER);
  policies = {
    spend: await addPolicy(
      app.t,
      dapp,
      "PAYMASTER_SA_LIMIT",
      { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 1, thresholdType: "NATIVE_ASSET" },
      "spend",
    ),
    count: await addPolicy(
      app.t,
      dapp,
      "PAYMASTER_SA_LIMIT",
      { type: "PAYMASTER", cycleDuration: { value: 1, unit: "day" }, threshold: 100, thresholdType: "COUNT" },
      "count",
    ),
  };
  settlement = startSettlement(app.t.ctx, { poll: false, metrics: settlementMetrics });
});
after(async () => {
  await settlement?.stop();
  await app?.close();
});

/** A fresh account's first operation, sponsored by the service and signed by its owner. */
async function sponsored(
  mode: Record<string, unknown> = {},
  fresh?: { op: UserOperation; owner: LocalAccount },
): Promise<UserOperation> {
  const { op, owner } = fresh ?? (await freshOperation(app));
  const answer = await requestSponsorship(app.t, dapp, op, mode);
  assert.equal(answer.reason, undefined, `refused: ${answer.reason}`);
  return signByAccount(app.env, { ...op, paymasterAndData: answer.paymasterAndData }, owner);
}

async function run(op: UserOperation) {
  const receipt = await handleOps(app.env, [op]);
  const [event] = parseEventLogs({ abi: entryPointAbi, logs: receipt.logs, eventName: "UserOperationEvent" });
  assert.ok(event, "no UserOperationEvent");
  return { receipt, event: event.args };
}

interface Row {
  user_op_hash: string;
  actual_cost: string | null;
  actual_gas_used: string | null;
  success: boolean | null;
  tx_hash: string | null;
  block_number: string | null;
  settled_at: Date | null;
  released_at: Date | null;
  funding_address: string | null;
  paymaster_address: string | null;
}

async function rows(sender: string): Promise<Row[]> {
  return app.t.db.query<Row>(
    `SELECT user_op_hash, actual_cost::text AS actual_cost, actual_gas_used::text AS actual_gas_used, success, tx_hash,
       block_number::text AS block_number, settled_at, released_at, funding_address, paymaster_address
     FROM sponsorships WHERE sender = $1 AND sponsored ORDER BY created_at, id`,
    [sender.toLowerCase()],
  );
}

/** Usage of both limits in their current cycle, and how many reservations they hold. */
async function usage(): Promise<{ spend: bigint; count: bigint; reservations: number }> {
  const used = async (policyId: string) => {
    const [row] = await app.t.db.query<{ used: string }>(
      "SELECT COALESCE(SUM(used), 0)::text AS used FROM limit_usage WHERE policy_id = $1",
      [policyId],
    );
    return BigInt(row?.used ?? "0");
  };
  const [held] = await app.t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM limit_reservations WHERE policy_id = ANY($1::uuid[])",
    [[policies.spend, policies.count]],
  );
  return { spend: await used(policies.spend), count: await used(policies.count), reservations: held?.n ?? 0 };
}

/** What the deposit check counts as held against the funding wallet's deposit. */
const outstanding = () =>
  new OutstandingCharges(app.t.db).of({
    chainId: 31337,
    paymasterAddress: app.env.paymaster.toLowerCase(),
    fundingAddress: fundingAddress(),
    notBefore: 0,
  });

const headBlock = () => app.env.publicClient.getBlockNumber({ cacheTime: 0 });

/** Actual costs of the operations settled so far, in order. */
const costs: bigint[] = [];
const total = () => costs.reduce((a, b) => a + b, 0n);

describe("settlement", () => {
  test("a mined operation is settled to its actual cost: the record, the NATIVE_ASSET usage, the deposit", async (t) => {
    const op = await sponsored();
    const [recorded] = await rows(op.sender);
    assert.equal(await outstanding(), maxChargeWei(op));
    assert.equal(recorded?.funding_address, fundingAddress());
    assert.equal(recorded?.paymaster_address, app.env.paymaster.toLowerCase());
    assert.deepEqual(await usage(), { spend: worstCaseCostWei(op), count: 1n, reservations: 2 });

    const { receipt, event } = await run(op);
    const pass = (await settlement.settleOnce())[0];
    assert.equal(pass?.settled, 1);
    assert.equal(pass?.reservations, 2);
    assert.equal(pass?.toBlock, receipt.blockNumber);
    // Caught up with the head: the lag gauge of the chain says 0 blocks.
    const lag = (await settlementMetrics.settlementLagBlocks.get()).values;
    assert.deepEqual(
      lag.map((v) => [v.labels.chain_id, v.value]),
      [["31337", 0]],
    );

    const [row] = await rows(op.sender);
    assert.equal(row?.user_op_hash, event.userOpHash);
    assert.equal(row?.actual_cost, event.actualGasCost.toString());
    assert.equal(row?.actual_gas_used, event.actualGasUsed.toString());
    assert.equal(row?.success, true);
    assert.equal(row?.tx_hash, receipt.transactionHash);
    assert.equal(row?.block_number, receipt.blockNumber.toString());
    assert.ok(row?.settled_at instanceof Date);
    assert.equal(row?.released_at, null);
    // The limit now counts what the operation cost, not its worst case; COUNT keeps its 1.
    costs.push(event.actualGasCost);
    assert.deepEqual(await usage(), { spend: total(), count: 1n, reservations: 0 });
    assert.ok(event.actualGasCost < worstCaseCostWei(op));
    t.diagnostic(`worst case ${worstCaseCostWei(op)} wei, actual ${event.actualGasCost} wei`);

    // Nothing of it is outstanding against the deposit any more.
    assert.equal(await outstanding(), 0n);
    assert.equal((await readCursor(app.t.db, 31337))?.lastBlock, receipt.blockNumber);
  });

  test("the same blocks read twice change nothing", async () => {
    const before = await usage();
    const head = await headBlock();
    await app.t.db.query("UPDATE chain_cursors SET last_block = -1 WHERE chain_id = 31337");
    const [pass] = await settlement.settleOnce();
    assert.equal(pass?.fromBlock, 0n);
    assert.equal(pass?.settled, 0);
    assert.equal(pass?.reservations, 0);
    assert.deepEqual(await usage(), before);
    assert.equal((await readCursor(app.t.db, 31337))?.lastBlock, head);
  });

  test("when one signature of an operation runs, its other signatures are released (the nonce is spent)", async () => {
    const fresh = await freshOperation(app);
    const first = await sponsored({}, fresh);
    const second = await sponsored({ expiryDuration: 600 }, fresh);
    assert.notEqual(first.paymasterAndData, second.paymasterAndData);
    // Re-signing replaced the reservation of the same sender and nonce: counted once. The deposit holds both.
    assert.deepEqual(await usage(), { spend: total() + worstCaseCostWei(first), count: 2n, reservations: 2 });
    assert.equal(await outstanding(), 2n * maxChargeWei(first));

    const { event } = await run(second);
    const [pass] = await settlement.settleOnce();
    assert.equal(pass?.settled, 1);
    assert.equal(pass?.superseded, 1);
    const [firstRow, secondRow] = await rows(first.sender);
    assert.ok(firstRow?.released_at instanceof Date, "the signature that did not run is released");
    assert.equal(firstRow?.settled_at, null);
    assert.equal(secondRow?.actual_cost, event.actualGasCost.toString());
    costs.push(event.actualGasCost);
    assert.deepEqual(await usage(), { spend: total(), count: 2n, reservations: 0 });
    assert.equal(await outstanding(), 0n);
  });

  test("a new watcher on the same database resumes after the last block processed and settles nothing twice", async () => {
    const cursor = (await readCursor(app.t.db, 31337))?.lastBlock;
    assert.equal(cursor, await headBlock());
    const op = await sponsored();
    const { receipt, event } = await run(op);
    await settlement.stop();

    settlement = startSettlement(app.t.ctx, { poll: false });
    const [pass] = await settlement.settleOnce();
    assert.equal(pass?.fromBlock, (cursor as bigint) + 1n);
    assert.equal(pass?.toBlock, receipt.blockNumber);
    assert.equal(pass?.settled, 1, "only the new operation");
    costs.push(event.actualGasCost);
    assert.deepEqual(await usage(), { spend: total(), count: 3n, reservations: 0 });
  });

  test("a sponsored operation never submitted is released once its validity has passed", async () => {
    const before = await usage();
    const op = await sponsored();
    assert.deepEqual(await usage(), {
      spend: before.spend + worstCaseCostWei(op),
      count: before.count + 1n,
      reservations: 2,
    });

    // Still valid: nothing is released.
    let [pass] = await settlement.settleOnce();
    assert.deepEqual(pass?.released, { sponsorships: 0, reservations: 0 });
    // Past validUntil but within the margin for block timestamps: still held.
    app.advance(300_000 + 1_000);
    [pass] = await settlement.settleOnce();
    assert.deepEqual(pass?.released, { sponsorships: 0, reservations: 0 });

    app.advance(EXPIRY_MARGIN_SECONDS * 1000);
    [pass] = await settlement.settleOnce();
    assert.deepEqual(pass?.released, { sponsorships: 1, reservations: 2 });
    assert.deepEqual(await usage(), before, "the operation was never paid: its amount and its count are given back");
    assert.equal(await outstanding(), 0n);
    const [holds] = await app.t.db.query<{ held: number; past: number }>(
      `SELECT count(*) FILTER (WHERE held > 0)::int AS held, count(*) FILTER (WHERE valid_until_minute < $1)::int AS past
       FROM deposit_holds`,
      [Math.floor((Date.now() + 361_000) / 1000) - EXPIRY_MARGIN_SECONDS - 5],
    );
    assert.deepEqual(holds, { held: 0, past: 0 }, "nothing is held, and the rows of minutes past are deleted");
    const [row] = await rows(op.sender);
    assert.ok(row?.released_at instanceof Date);
    assert.equal(row?.settled_at, null);
    // Settled rows are not touched by the release.
    const settledRows = await app.t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM sponsorships WHERE settled_at IS NOT NULL AND released_at IS NOT NULL",
    );
    assert.equal(settledRows[0]?.n, 0);
  });

  test("a chain restarted under the same id (another block 0) is read again from its start", async () => {
    await app.t.db.query(
      "UPDATE chain_cursors SET last_block = 1000000, genesis_hash = '0xdead' WHERE chain_id = 31337",
    );
    settlement = startSettlement(app.t.ctx, { poll: false });
    const [pass] = await settlement.settleOnce();
    assert.equal(pass?.fromBlock, 0n);
    assert.equal(pass?.settled, 0);
    const cursor = await readCursor(app.t.db, 31337);
    assert.equal(cursor?.lastBlock, await headBlock());
    assert.equal(cursor?.genesisHash, (await app.env.publicClient.getBlock({ blockNumber: 0n })).hash);
  });
});

describe("settlement without a usable RPC", () => {
  test("chains without an RPC are not watched", async () => {
    const t = await startTestApp();
    try {
      const watcher = startSettlement(t.ctx, { poll: false });
      assert.equal(watcher.chains.length, 0);
      await watcher.stop();
    } finally {
      await t.close();
    }
  });

  test("an unreachable RPC fails the pass at once, and leaves the cursor alone", async () => {
    const t = await startTestApp({
      chains: new Map([[31337, { chainId: 31337, name: "local", rpcUrl: "http://127.0.0.1:1" }]]),
    });
    try {
      const warnings: string[] = [];
      const watcher = startSettlement(t.ctx, { poll: false, log: { info: () => {}, warn: (m) => warnings.push(m) } });
      const started = performance.now();
      await assert.rejects(watcher.settleOnce());
      assert.ok(performance.now() - started < 1_000);
      assert.equal(await readCursor(t.db, 31337), undefined);
      await watcher.stop();
    } finally {
      await t.close();
    }
  });

  test("the polling loop logs a failing RPC without its URL, once", async () => {
    // An RPC that answers every request with 500, and counts them: a pass fails at its first request (the head).
    const node = await startWebhookServer();
    const t = await startTestApp({
      chains: new Map([[31337, { chainId: 31337, name: "local", rpcUrl: node.url("/status-500?key=secret-key") }]]),
    });
    try {
      const warnings: string[] = [];
      const watcher = startSettlement(t.ctx, {
        intervalMs: 10,
        log: { info: () => {}, warn: (m) => warnings.push(m) },
      });
      // A pass starts once the one before has failed and been logged (or not): at the fifth request, four have.
      await eventually(
        "five passes",
        () => node.callsTo("/status-500").length,
        (passes) => passes >= 5,
      );
      await watcher.stop();
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0] as string, /^settlement on chain 31337 failed: /);
      assert.doesNotMatch(warnings[0] as string, /secret-key/);
    } finally {
      await t.close();
      await node.close();
    }
  });
});
