import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import type { Dapp, TestApp } from "../helpers/app";

/** Waits until `check` holds, polling; fails with `what` after `ms` (a bound on a wait, not a speed target). */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(50);
  }
}

/** Sets the dApp's alert url and threshold through the management API. */
export async function setAlerts(t: TestApp, dapp: Dapp, url: string, thresholdWei = "0"): Promise<void> {
  const reply = await t.call("PATCH", "paymasterParameters", {
    token: dapp.token,
    apiKey: dapp.apiKey,
    body: { paymasterId: dapp.paymasterId, type: "depositAlert", thresholdWei, url },
  });
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
}

/** The account's webhook secret, the key of every alert's signature. */
export async function webhookSecretOf(t: TestApp, dapp: Dapp): Promise<string> {
  const reply = await t.call("GET", "webhook-secret", { token: dapp.token });
  return (reply.body.data as { webhookSecret: string }).webhookSecret;
}

/** The outbox rows of a paymaster, oldest first. */
export const outboxOf = (t: TestApp, paymasterId: string) =>
  t.db.query<{ event: string; state: string; attempts: number; last_error: string | null }>(
    "SELECT event, state, attempts, last_error FROM alert_outbox WHERE paymaster_id = $1 ORDER BY id",
    [paymasterId],
  );
