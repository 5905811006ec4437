import { createHmac, randomBytes } from "node:crypto";

// Standard Webhooks (https://www.standardwebhooks.com): each delivery carries webhook-id, webhook-timestamp and
// webhook-signature, the last being "v1," and the base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` under the
// endpoint's secret. A secret is "whsec_" and the base64 of its key's bytes; the key is what the HMAC uses.

const SECRET_PREFIX = "whsec_";
/** 32 bytes: the size of HMAC-SHA256's block-sized key is more than enough, and what the specification suggests. */
const SECRET_BYTES = 32;

/** A new endpoint secret, as the dApp receives it once. */
export const newEndpointSecret = (): string => `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;

/** The HMAC key of a secret: the bytes its base64 part encodes. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("an endpoint secret starts with whsec_");
  return Buffer.from(secret.slice(SECRET_PREFIX.length), "base64");
}

/** One signature: `v1,` and the base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`. */
export function standardSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, "utf8").digest("base64");
  return `v1,${mac}`;
}

/**
 * The three headers of one attempt. With several secrets (a rotation's grace period) the signature header holds one
 * signature per secret, separated by spaces: a receiver that knows either secret verifies it.
 */
export function standardHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": secrets.map((secret) => standardSignature(secret, id, timestampSeconds, body)).join(" "),
  };
}
