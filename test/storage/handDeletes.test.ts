// The service never deletes a paymaster or a policy (it switches them off), so the rows written on the sponsorship
// path carry no foreign key to check (migration 32). An operator who deletes one by hand still sees the rows below it
// go, as the foreign keys' cascades did: triggers on the parents' deletes remove them, and only them.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { type Dapp, startTestApp, type TestApp } from "../helpers/app";
import { addPolicy } from "../helpers/dappSetup";

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(() => t.close());

const SENDER = "0x00000000000000000000000000000000000000aa";

/** A dApp with a COUNT limit, a sponsorship row and the limit's usage and reservation rows, written as the path does. */
async function dappWithRows(): Promise<Dapp & { policyId: string }> {
  const dapp = await t.dapp();
  const policyData = {
    type: "PAYMASTER",
    cycleDuration: { value: 1, unit: "day" },
    threshold: 10,
    thresholdType: "COUNT",
  };
  const policyId = await addPolicy(t, dapp, "PAYMASTER_SA_LIMIT", policyData, `limit-${randomUUID().slice(0, 8)}`);
  await t.db.query(
    `INSERT INTO sponsorships (id, paymaster_id, chain_id, sender, nonce, sponsored, rule_outcomes)
     VALUES ($1, $2, $3, $4, 0, true, '[]')`,
    [randomUUID(), dapp.paymasterId, dapp.chainId, SENDER],
  );
  await t.db.query("INSERT INTO limit_usage (policy_id, cycle_start_ms, scope_key, used) VALUES ($1, 0, '', 1)", [
    policyId,
  ]);
  await t.db.query(
    `INSERT INTO limit_reservations (policy_id, cycle_start_ms, sender, nonce, scope_key, amount, valid_until)
     VALUES ($1, 0, $2, 0, '', 1, 0)`,
    [policyId, SENDER],
  );
  return { ...dapp, policyId };
}

async function rowsOf(dapp: Dapp & { policyId: string }) {
  const count = async (sql: string, id: string) =>
    Number((await t.db.query<{ n: string }>(`SELECT count(*)::text AS n ${sql}`, [id]))[0]?.n);
  return {
    sponsorships: await count("FROM sponsorships WHERE paymaster_id = $1", dapp.paymasterId),
    usage: await count("FROM limit_usage WHERE policy_id = $1", dapp.policyId),
    reservations: await count("FROM limit_reservations WHERE policy_id = $1", dapp.policyId),
  };
}

test("a policy deleted by hand takes its usage and reservations with it, and nothing else", async () => {
  const gone = await dappWithRows();
  const kept = await dappWithRows();
  assert.deepEqual(await rowsOf(gone), { sponsorships: 1, usage: 1, reservations: 1 });
  await t.db.query("DELETE FROM policies WHERE id = $1", [gone.policyId]);
  assert.deepEqual(await rowsOf(gone), { sponsorships: 1, usage: 0, reservations: 0 });
  assert.deepEqual(await rowsOf(kept), { sponsorships: 1, usage: 1, reservations: 1 });
});

test("a paymaster deleted by hand takes its sponsorships and its policies' rows with it, and nothing else", async () => {
  const gone = await dappWithRows();
  const kept = await dappWithRows();
  await t.db.query("DELETE FROM paymasters WHERE id = $1", [gone.paymasterId]);
  assert.deepEqual(await rowsOf(gone), { sponsorships: 0, usage: 0, reservations: 0 });
  assert.deepEqual(await rowsOf(kept), { sponsorships: 1, usage: 1, reservations: 1 });
});

test("an account deleted by hand takes its paymasters' sponsorships and limit rows with it", async () => {
  const gone = await dappWithRows();
  const kept = await dappWithRows();
  await t.db.query("DELETE FROM accounts WHERE id = $1", [gone.accountId]);
  assert.deepEqual(await rowsOf(gone), { sponsorships: 0, usage: 0, reservations: 0 });
  assert.deepEqual(await rowsOf(kept), { sponsorships: 1, usage: 1, reservations: 1 });
});
