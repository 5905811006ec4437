import type { FastifyBaseLogger } from "fastify";
import type { Metrics } from "../metrics/metrics";
import { type ClaimedAlert, claimDueAlerts, markAlertFailed, markAlertSent } from "../storage/alerts";
import type { Queryable } from "../storage/database";
import type { GuardPolicy } from "../webhooks/addressGuard";
import { type CallResult, callWebhook } from "../webhooks/call";
import { accountWebhookSecret, type WebhookSettings } from "../webhooks/settings";

/** An alert is tried for this long after it was queued, then given up. */
export const ALERT_RETRY_WINDOW_MS = 60 * 60 * 1000;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60 * 1000;
/** Alerts one pass claims; the rest wait for the next pass. */
const CLAIM_BATCH = 20;

/** The wait before attempt `attempts + 1`: 1 s, 2 s, 4 s … up to 5 min. */
const retryDelayMs = (attempts: number): number =>
  Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));

/** Any 2xx answer delivers an alert; its body is not read for meaning. */
const delivered = (): CallResult => ({ ok: true });

export interface AlertDeliveryDeps {
  db: Queryable;
  settings: WebhookSettings;
  guard: GuardPolicy;
  now: () => number;
  log: FastifyBaseLogger;
  metrics: Metrics;
}

/**
 * Delivers the outbox: claims the alerts that are due, POSTs each (signed like the webhooks, through the same address
 * guard), and marks it sent, due again later (exponential backoff), or given up once the hour has passed. One pass at
 * a time per process; `kick` asks for a pass now, without waiting for it, so nobody ever waits for a delivery.
 */
export class AlertDelivery {
  readonly #deps: AlertDeliveryDeps;
  #running: Promise<void> | undefined;
  #again = false;

  constructor(deps: AlertDeliveryDeps) {
    this.#deps = deps;
  }

  /** Starts a pass now, or one more after the pass under way. Never throws. */
  kick(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#passes().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves when no pass is under way (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #passes(): Promise<void> {
    do {
      this.#again = false;
      try {
        await this.#pass();
      } catch (error) {
        this.#deps.log.error({ err: error }, "alert delivery pass failed");
      }
    } while (this.#again);
  }

  async #pass(): Promise<void> {
    const { db, now, settings } = this.#deps;
    // The lease outlasts one attempt (the call's whole timeout) with room to write its outcome.
    const leaseMs = settings.timeoutMs + 30_000;
    for (;;) {
      const claimed = await claimDueAlerts(db, now(), leaseMs, CLAIM_BATCH);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((alert) => this.#attempt(alert)));
      if (claimed.length < CLAIM_BATCH) return;
    }
  }

  async #attempt(alert: ClaimedAlert): Promise<void> {
    const { db, settings, guard, now, log, metrics } = this.#deps;
    const result = await callWebhook(
      { method: "POST", url: alert.url, body: alert.body },
      {
        guard,
        timeoutMs: settings.timeoutMs,
        secret: accountWebhookSecret(settings, alert.accountId),
        lookup: settings.lookup,
        nowMs: now,
        verdict: delivered,
      },
    );
    if (result.ok) {
      await markAlertSent(db, alert.id);
      metrics.alerts.inc({ event: alert.event, outcome: "sent" });
      return;
    }
    const next = now() + retryDelayMs(alert.attempts);
    const givingUp = next > alert.createdMs + ALERT_RETRY_WINDOW_MS;
    await markAlertFailed(db, alert.id, result.reason, givingUp ? null : next);
    metrics.alerts.inc({ event: alert.event, outcome: givingUp ? "failed" : "retried" });
    // The host only: a URL may carry a secret of the dApp's (a token in its path or query).
    const where = { alertId: alert.id, event: alert.event, paymasterId: alert.paymasterId, host: hostOf(alert.url) };
    if (givingUp) {
      log.warn(
        { ...where, attempts: alert.attempts, reason: result.reason },
        "alert given up: not delivered within an hour",
      );
    } else {
      log.info(
        { ...where, attempts: alert.attempts, reason: result.reason },
        "alert delivery failed; tried again later",
      );
    }
  }
}

const hostOf = (url: string): string => (URL.canParse(url) ? new URL(url).host : "(invalid url)");
