import { randomBytes } from "node:crypto";
import { Secret, type WebhookSigningKeySource } from "../config";
import { readKeyFile } from "../keyFile";

/** The master key of the per-account webhook secrets, from the environment or its key file (made on first start). */
export function loadWebhookSigningKey(source: WebhookSigningKeySource): Secret {
  if (source.kind === "env") return source.key;
  const key = readKeyFile(source, {
    label: "webhook signing key",
    variables: "WEBHOOK_SIGNING_KEY or WEBHOOK_SIGNING_KEY_FILE",
    why: "instances sharing a database must give each account the same webhook secret",
    generate: () => `0x${randomBytes(32).toString("hex")}`,
  });
  return new Secret(key);
}

/** The key's 32 bytes, the HMAC key of `webhookSecret`. */
export const signingKeyBytes = (key: Secret): Buffer => Buffer.from(key.reveal().slice(2), "hex");
