import type { AlertTimers } from "./alerts/alerts";
import type { ChainConfig, FailureThrottleConfig, HttpLimits, Secret, TrustProxy } from "./config";
import type { EventTimers } from "./events/delivery";
import type { CredentialCache } from "./http/credentialCache";
import type { Metrics } from "./metrics/metrics";
import type { Signer } from "./signer/signer";
import type { Database } from "./storage/database";
import type { WebhookSettings } from "./webhooks/settings";

/** What the request handlers need from the running service; tests build one around their own database. */
export interface AppContext {
  db: Database;
  chains: ReadonlyMap<number, ChainConfig>;
  bodyLimitBytes: number;
  /** Timeouts and the connection cap of the HTTP server; absent: the defaults (DEFAULT_HTTP_LIMITS). */
  http?: HttpLimits;
  /** Throttling of wrong credentials per client address; absent: the defaults (DEFAULT_FAILURE_THROTTLE). */
  failureThrottle?: FailureThrottleConfig;
  /** Fastify's trustProxy, for the client address behind a reverse proxy; absent: the socket's peer. */
  trustProxy?: TrustProxy;
  /**
   * The service's clock (ms): sponsorship decisions (validity windows, limit cycles, quotas), credentials' expiry, the
   * caches' ages, the alerts, the throttle. Set once where the context is made (the wall clock in src/main.ts); tests
   * set and move it.
   */
  now: () => number;
  /**
   * How long a paymaster's sponsorship setup is kept in memory (ms); absent: 1 s. Writes through this instance drop
   * the paymaster's entry at once; the time bounds how late another instance's writes are seen.
   */
  setupCacheTtlMs?: number;
  /** The verifying signer of sponsored paymasterAndData. */
  signer: Signer;
  /** Outgoing webhook calls; absent: public addresses only, 2 s, a signing key of this process. */
  webhooks?: WebhookSettings;
  /** When set, the loopback-only admin route accepts this secret (the account command uses it). */
  adminSecret?: string;
  /** Where the service counts what it does (GET /metrics); absent: the app makes its own, process metrics left out. */
  metrics?: Metrics;
  /**
   * The alerts' background work: the delivery poll (retries, alerts other instances left) and the periodic deposit
   * check. Absent (tests, contexts built by hand): alerts are still queued and sent at once, never retried.
   */
  alerts?: AlertTimers;
  /**
   * How the event endpoints' deliveries pace themselves (src/events/delivery.ts): the poll, the retries' backoff, when a
   * failing endpoint is turned off. Absent: DEFAULT_EVENT_TIMERS (a poll every second, about a day of retries).
   */
  events?: EventTimers;
  /** Who tokens and apiKeys are, kept in memory; absent: the app makes its own. Tests pass one to look into it. */
  credentials?: CredentialCache;
  /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
  metricsToken?: Secret;
  /**
   * Checking our contracts on every chain with an rpcUrl, at start and every `intervalMs` (src/chain/contractWatch.ts):
   * a paymaster that fails a check is refused before signing and reported by /readyz and the chains endpoint. Absent
   * (tests, contexts built by hand): nothing is checked. `exclude`: chains not to check (the development chain).
   */
  contractChecks?: { intervalMs?: number; exclude?: readonly number[] };
  /** The built web dashboard served at /dashboard/; absent: no dashboard (DASHBOARD=off, and tests by default). */
  dashboardFolder?: string;
}
