import { randomUUID } from "node:crypto";
import type { Queryable } from "./database";
import { paymasterRows } from "./paymasterRows";

export interface Webhook {
  id: string;
  paymasterId: string;
  url: string;
  requestType: "GET" | "POST";
  active: boolean;
}

interface WebhookRow {
  id: string;
  paymaster_id: string;
  url: string;
  request_type: "GET" | "POST";
  active: boolean;
}

const COLUMNS = "id, paymaster_id, url, request_type, active";

const toWebhook = (row: WebhookRow): Webhook => ({
  id: row.id,
  paymasterId: row.paymaster_id,
  url: row.url,
  requestType: row.request_type,
  active: row.active,
});

export async function insertWebhook(
  db: Queryable,
  webhook: { paymasterId: string; url: string; requestType: "GET" | "POST" },
): Promise<Webhook> {
  const rows = await db.query<WebhookRow>(
    `INSERT INTO webhooks (id, paymaster_id, url, request_type) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [randomUUID(), webhook.paymasterId, webhook.url, webhook.requestType],
  );
  return toWebhook(rows[0] as WebhookRow);
}

export async function listWebhooks(db: Queryable, paymasterId: string): Promise<Webhook[]> {
  const rows = await paymasterRows<WebhookRow>(db, "webhooks", COLUMNS, paymasterId);
  return rows.map(toWebhook);
}

export async function findWebhook(db: Queryable, paymasterId: string, webhookId: string): Promise<Webhook | undefined> {
  const rows = await db.query<WebhookRow>(`SELECT ${COLUMNS} FROM webhooks WHERE paymaster_id = $1 AND id = $2`, [
    paymasterId,
    webhookId,
  ]);
  return rows[0] && toWebhook(rows[0]);
}

/** Returns whether the webhook exists. */
export async function setWebhookActive(
  db: Queryable,
  paymasterId: string,
  webhookId: string,
  active: boolean,
): Promise<boolean> {
  const rows = await db.query("UPDATE webhooks SET active = $3 WHERE paymaster_id = $1 AND id = $2 RETURNING id", [
    paymasterId,
    webhookId,
    active,
  ]);
  return rows.length > 0;
}

/** Returns whether a webhook was deleted. */
export async function deleteWebhook(db: Queryable, paymasterId: string, webhookId: string): Promise<boolean> {
  const rows = await db.query("DELETE FROM webhooks WHERE paymaster_id = $1 AND id = $2 RETURNING id", [
    paymasterId,
    webhookId,
  ]);
  return rows.length > 0;
}
