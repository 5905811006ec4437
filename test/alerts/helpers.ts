import assert from "node:assert/strict";
import { verifyWebhookSignature } from "../../src/webhooks/signature";
import type { Dapp, TestApp } from "../helpers/app";
import { eventually } from "../helpers/eventually";
import type { ReceivedCall, WebhookServer } from "../helpers/webhookServer";

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
  t.db.query<{ event: string; state: string; attempts: number; last_error: string | null; created_ms: string }>(
    "SELECT event, state, attempts, last_error, created_ms::text AS created_ms FROM alert_outbox WHERE paymaster_id = $1 ORDER BY id",
    [paymasterId],
  );

/**
 * Whether an alert the receiver got is signed with `secret` (the account's webhook secret), as the webhooks are, and
 * fresh at `nowMs`: the receiver's clock, which is the service's in a test that moves it.
 */
export const signedWith = (secret: string, call: ReceivedCall, nowMs: number) =>
  verifyWebhookSignature(
    secret,
    call.headers["x-paymaster-signature"] as string,
    call.headers["x-paymaster-timestamp"] as string,
    call.body,
    { nowSeconds: Math.floor(nowMs / 1000) },
  );

/** Waits until the receiver has had at least `count` calls to `path` (`what`: the calls awaited), and returns them. */
export const received = (receiver: WebhookServer, path: string, count: number, what: string) =>
  eventually(
    what,
    () => receiver.callsTo(path),
    (calls) => calls.length >= count,
  );
