import { randomBytes } from "node:crypto";
import { Secret } from "../config";
import { checkUrl, type GuardPolicy, type ListenAddress, type Lookup } from "./addressGuard";
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from "./call";
import { webhookSecret } from "./signature";
import { signingKeyBytes } from "./signingKey";

/** How the service calls webhooks; main.ts fills it from the configuration. */
export interface WebhookSettings {
  /** Private, loopback and link-local webhook addresses are allowed (development and tests). */
  allowPrivate: boolean;
  timeoutMs: number;
  /** The master key of the per-account webhook secrets. */
  signingKey: Secret;
  /** A stand-in for DNS (tests). */
  lookup?: Lookup;
}

let processKey: Secret | undefined;

/**
 * The settings of a context, or the safe ones when it has none: public addresses only, the default timeout, and a
 * master key made for this process (secrets then change at every start, which only a context built by hand sees).
 */
export function webhookSettings(settings: WebhookSettings | undefined): WebhookSettings {
  if (settings) return settings;
  processKey ??= new Secret(`0x${randomBytes(32).toString("hex")}`);
  return { allowPrivate: false, timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS, signingKey: processKey };
}

/** The account's webhook secret under these settings' master key. */
export const accountWebhookSecret = (settings: WebhookSettings, accountId: string): string =>
  webhookSecret(signingKeyBytes(settings.signingKey), accountId);

/** The guard of a service whose listen addresses `addresses()` gives (Fastify's `app.addresses()`). */
export function guardOf(settings: WebhookSettings, addresses: () => readonly ListenAddress[]): GuardPolicy {
  return { allowPrivate: settings.allowPrivate, self: addresses };
}

/**
 * At registration: why the service would refuse to call this URL, or undefined. A host that does not resolve (yet),
 * or does not answer within the timeout, is accepted: the guard runs again before every call.
 */
export async function registrationRefusal(
  url: string,
  guard: GuardPolicy,
  settings: WebhookSettings,
): Promise<string | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
  try {
    const checked = await checkUrl(new URL(url), guard, { lookup: settings.lookup, signal: controller.signal });
    return checked.ok || checked.unresolved ? undefined : checked.reason;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
