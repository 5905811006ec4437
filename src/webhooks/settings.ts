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

/** Lookup errors that mean DNS answered: the name does not exist, or has no address. */
const NAME_DOES_NOT_EXIST = new Set(["ENOTFOUND", "ENODATA"]);

/** What registration makes of a webhook URL: refuse it (why), accept it with a warning for the log, or accept it. */
export type RegistrationCheck = { refusal: string } | { warning: string } | { accepted: true };

/**
 * At registration: whether the service would refuse to call this URL. A blocked address, or a name DNS says does not
 * exist (ENOTFOUND: `localhost.`, `foo.localhost`, a typo), is refused. When DNS cannot tell (no answer within the
 * timeout, a server failure, no DNS server reachable), the URL is accepted with a warning: the guard runs again before
 * every call, so nothing is called that the guard would refuse.
 */
export async function registrationCheck(
  url: string,
  guard: GuardPolicy,
  settings: WebhookSettings,
): Promise<RegistrationCheck> {
  const host = new URL(url).hostname;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), settings.timeoutMs);
  const unchecked = (why: string) => ({
    warning: `webhook host ${host} accepted unchecked: ${why}; it is checked again before every call`,
  });
  try {
    const checked = await checkUrl(new URL(url), guard, { lookup: settings.lookup, signal: controller.signal });
    if (checked.ok) return { accepted: true };
    if (!checked.unresolved) return { refusal: checked.reason };
    if (checked.dnsCode === undefined || NAME_DOES_NOT_EXIST.has(checked.dnsCode)) {
      return { refusal: `host ${host} does not exist (DNS answered ${checked.dnsCode ?? "no address"})` };
    }
    return unchecked(`DNS failed (${checked.dnsCode})`);
  } catch {
    return unchecked(`DNS did not answer within ${settings.timeoutMs} ms`);
  } finally {
    clearTimeout(timer);
  }
}
