import { createHmac, timingSafeEqual } from "node:crypto";

/** `sha256=` and the hex HMAC-SHA256 of `${timestamp}.${signed text}` under the account's webhook secret. */
export const SIGNATURE_HEADER = "x-paymaster-signature";
/** Unix seconds when the request was made; part of the signed text, so an old request cannot be replayed later. */
export const TIMESTAMP_HEADER = "x-paymaster-timestamp";

/**
 * An account's webhook secret: HMAC-SHA256(master key, accountId) in hex. Nothing secret is stored per account; the
 * secret changes for every account when the master key (WEBHOOK_SIGNING_KEY or the key file) changes.
 */
export function webhookSecret(masterKey: Uint8Array, accountId: string): string {
  return createHmac("sha256", masterKey).update(accountId, "utf8").digest("hex");
}

/**
 * The signature header of one request. The HMAC key is the secret text exactly as the webhook-secret endpoint returns
 * it (its UTF-8 bytes); the signed text is the raw POST body, or for a GET the request target (path and query).
 */
export function signWebhook(secret: string, timestamp: number, signedText: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${signedText}`, "utf8").digest("hex")}`;
}

/**
 * What a receiver does (shown here for the tests and the README): recompute, compare in constant time, check the age
 * against its own clock, `at.nowSeconds` (a test whose service runs on a moved clock gives that clock).
 */
export function verifyWebhookSignature(
  secret: string,
  header: string | undefined,
  timestamp: string | undefined,
  signedText: string,
  at: { nowSeconds: number; toleranceSeconds?: number },
): boolean {
  if (header === undefined || timestamp === undefined || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(at.nowSeconds - Number(timestamp)) > (at.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, Number(timestamp), signedText));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
