import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Secret } from "../config";
import { signingKeyBytes } from "../webhooks/signingKey";

// Endpoint secrets must be read back to sign, so they cannot be hashed like tokens: they are sealed with AES-256-GCM
// under a key derived from the webhook signing key (WEBHOOK_SIGNING_KEY or its key file), which never enters the
// database. The endpoint's id is the associated data, so a sealed secret copied onto another endpoint does not open.

const VERSION = "v1";
const INFO = "paymaster event endpoint secrets";
const IV_BYTES = 12;
const TAG_BYTES = 16;

const sealingKeys = new WeakMap<Secret, Buffer>();

/** The sealing key: HKDF-SHA256 of the signing key, for this use alone (derived once per key). */
function sealingKey(signingKey: Secret): Buffer {
  let key = sealingKeys.get(signingKey);
  if (!key) {
    key = Buffer.from(hkdfSync("sha256", signingKeyBytes(signingKey), Buffer.alloc(0), INFO, 32));
    sealingKeys.set(signingKey, key);
  }
  return key;
}

/** `v1.` and the base64url of the nonce, the tag and the ciphertext. */
export function sealSecret(signingKey: Secret, endpointId: string, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", sealingKey(signingKey), iv);
  cipher.setAAD(Buffer.from(endpointId, "utf8"));
  const sealed = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString("base64url")}`;
}

/** The secret, or an error when it was sealed under another signing key or for another endpoint. */
export function openSecret(signingKey: Secret, endpointId: string, sealed: string): string {
  const [version, text] = sealed.split(".");
  if (version !== VERSION || !text) throw new Error("the endpoint's secret is not sealed in a form this service reads");
  const bytes = Buffer.from(text, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", sealingKey(signingKey), bytes.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(endpointId, "utf8"));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    throw new Error(
      "the endpoint's secret does not open: it was sealed under another webhook signing key (rotate the endpoint's secret)",
    );
  }
}
