import type { FastifyBaseLogger } from "fastify";
import type { SponsoringChain } from "../chain/sponsoringChains";
import type { Metrics } from "../metrics/metrics";
import type { DepositReading, InFlightCharges } from "../sponsorship/rules/deposit";
import type { LimitRefused } from "../sponsorship/rules/spendingLimits";
import { alertsWanted, noteDepositFigure, noteLimitRefusal, pruneAlerts } from "../storage/alerts";
import type { Database } from "../storage/database";
import type { OutstandingCharges } from "../storage/outstandingCharges";
import type { GuardPolicy } from "../webhooks/addressGuard";
import type { WebhookSettings } from "../webhooks/settings";
import { AlertDelivery } from "./delivery";
import { readWatchedDeposits } from "./depositWatch";

/** How often the background work runs (main.ts: DEFAULT_ALERT_TIMERS; tests: shorter). */
export interface AlertTimers {
  /** Claims the alerts that are due (retries, and those another instance queued or left behind). */
  deliveryPollMs: number;
  /** Reads the deposits of every paymaster with alerts set. */
  depositCheckMs: number;
}

export const DEFAULT_ALERT_TIMERS: AlertTimers = { deliveryPollMs: 1_000, depositCheckMs: 60_000 };

export interface AlertsDeps {
  db: Database;
  chains: ReadonlyMap<number, SponsoringChain>;
  outstanding: OutstandingCharges;
  /** The deposit rule's: the periodic check counts the sponsorships being signed, and its readings take their order. */
  inFlight: InFlightCharges;
  settings: WebhookSettings;
  guard: GuardPolicy;
  now: () => number;
  log: FastifyBaseLogger;
  metrics: Metrics;
}

/** Cycles known to have their limit.reached queued; past this many the set starts afresh (the table decides). */
const NOTED_LIMITS_KEPT = 10_000;
/** Deposits whose newest reading is remembered; past this many the one read longest ago is forgotten. */
const NEWEST_READINGS_KEPT = 10_000;
/** How long whether a paymaster has alerts set is believed; another instance's change is seen within this. */
const SETTINGS_TTL_MS = 5_000;
/** Delivered and given-up alerts are kept this long (to look into), then deleted by the periodic check. */
const KEEP_DONE_ALERTS_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The alerts of one process (docs/alerts.md). The sponsorship rules call `depositObserved` and `limitRefused` and go
 * on at once: the decision (one statement) and the delivery run detached, so a slow database write or a receiver that
 * never answers costs a sponsorship nothing.
 */
export class Alerts {
  readonly #deps: AlertsDeps;
  readonly #delivery: AlertDelivery;
  /** Per deposit, the newest reading not yet noted: a burst of sponsorships makes one statement at a time. */
  readonly #latest = new Map<string, DepositReading>();
  /**
   * Per deposit, the order of the newest reading taken in (noted, being noted or waiting), least recently read first.
   * A reading older than that is dropped: written after a newer one, it would undo it (the periodic check's reading,
   * slower, finding the deposit above after a sponsorship's newer one found it below re-arms the alert, and the next
   * reading alerts again for the same crossing).
   */
  readonly #newest = new Map<string, number>();
  readonly #noting = new Set<string>();
  readonly #limitsNoted = new Set<string>();
  readonly #pending = new Set<Promise<void>>();
  /** Per paymaster, whether it has alerts set and until when (wall clock) that is believed. */
  readonly #alertsOn = new Map<string, { on: boolean; untilMs: number }>();
  #timers: NodeJS.Timeout[] = [];
  #checking: Promise<void> | undefined;

  constructor(deps: AlertsDeps) {
    this.#deps = deps;
    this.#delivery = new AlertDelivery(deps);
  }

  /**
   * A reading of a deposit: the deposit rule's after a sponsorship (or a refusal for want of deposit), or the periodic
   * check's. Readings of a deposit are noted in the order they were taken (`order`), whatever the order they arrive in.
   */
  readonly depositObserved = (reading: DepositReading): void => {
    // A reading that may count a sponsorship twice could cross the threshold by itself: only exact ones decide. Some
    // reading is exact whenever no sponsorship of the deposit is being signed or recorded during it.
    if (!reading.exact) return;
    const key = `${reading.paymasterId}:${reading.paymasterAddress}`;
    const newest = this.#newest.get(key);
    if (newest !== undefined && reading.order <= newest) return;
    this.#newest.delete(key);
    this.#newest.set(key, reading.order);
    if (this.#newest.size > NEWEST_READINGS_KEPT) {
      const [oldest] = this.#newest.keys();
      if (oldest !== undefined) this.#newest.delete(oldest);
    }
    this.#latest.set(key, reading);
    if (this.#noting.has(key)) return;
    this.#noting.add(key);
    this.#track(this.#drain(key));
  };

  /** A spending limit refused an operation: limit.reached, once per limit and cycle. */
  readonly limitRefused = (refused: LimitRefused): void => {
    const key = `${refused.policy.id}:${refused.cycleStartMs}`;
    if (this.#limitsNoted.has(key)) return;
    if (this.#limitsNoted.size >= NOTED_LIMITS_KEPT) this.#limitsNoted.clear();
    // Held while the statement runs, so a burst of refusals makes one; kept once the cycle's alert is known to be queued
    // (by this instance or another), so later refusals of the cycle cost nothing.
    this.#limitsNoted.add(key);
    const { input, policy } = refused;
    const note = async () => {
      if (!(await this.#hasAlerts(input.setup.paymasterId))) {
        this.#limitsNoted.delete(key);
        return;
      }
      const noted = await noteLimitRefusal(this.#deps.db, {
        paymasterId: input.setup.paymasterId,
        chainId: input.setup.chainId,
        policyId: policy.id,
        policyName: policy.name,
        cycleStartMs: refused.cycleStartMs,
        reason: refused.reason,
        at: new Date(input.nowMs).toISOString(),
        nowMs: input.nowMs,
      });
      if (noted === "queued") this.#delivery.kick();
      if (noted === "alertsOff") this.#limitsNoted.delete(key);
    };
    this.#track(
      note().catch((error: unknown) => {
        this.#limitsNoted.delete(key);
        this.#deps.log.error({ err: error, policyId: policy.id }, "limit alert not recorded");
      }),
    );
  };

  /** The management API changed a paymaster's alerts through this instance: believed at once. */
  readonly settingsChanged = (paymasterId: string): void => {
    this.#alertsOn.delete(paymasterId);
  };

  /** Runs the delivery poll and the periodic deposit check until `stop`. */
  start(timers: AlertTimers): void {
    this.#timers.push(setInterval(() => this.#delivery.kick(), timers.deliveryPollMs).unref());
    this.#timers.push(setInterval(() => this.#checkDeposits(), timers.depositCheckMs).unref());
  }

  /** Stops the timers and waits for what is under way: notes being written, a delivery pass (bounded by its timeout). */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.idle();
  }

  /**
   * Waits until the periodic check under way, the readings and refusals handed over so far and the delivery pass they
   * started are done (shutdown, tests).
   */
  async idle(): Promise<void> {
    await this.#checking;
    while (this.#pending.size > 0) await Promise.all(this.#pending);
    await this.#delivery.idle();
  }

  #checkDeposits(): void {
    if (this.#checking) return;
    const { db, chains, outstanding, inFlight, now, log } = this.#deps;
    const nowMs = now();
    this.#checking = readWatchedDeposits({ db, chains, outstanding, inFlight }, nowMs, this.depositObserved)
      .then(() => pruneAlerts(db, nowMs - KEEP_DONE_ALERTS_MS))
      .catch((error: unknown) => log.error({ err: error }, "deposit alert check failed"))
      .finally(() => {
        this.#checking = undefined;
      });
  }

  async #drain(key: string): Promise<void> {
    try {
      for (let figure = this.#latest.get(key); figure; figure = this.#latest.get(key)) {
        this.#latest.delete(key);
        await this.#note(figure);
      }
    } finally {
      this.#noting.delete(key);
    }
  }

  async #note(reading: DepositReading): Promise<void> {
    try {
      if (!(await this.#hasAlerts(reading.paymasterId))) return;
      const { order: _, exact: __, ...figure } = reading;
      const queued = await noteDepositFigure(this.#deps.db, { ...figure, at: new Date(figure.nowMs).toISOString() });
      if (queued) this.#delivery.kick();
    } catch (error) {
      this.#deps.log.error({ err: error, paymasterId: reading.paymasterId }, "deposit alert check not recorded");
    }
  }

  /**
   * Whether the paymaster has alerts set (or an event endpoint subscribed to them), from memory for a few seconds:
   * paymasters without alerts (most) cost their sponsorships no statement at all.
   */
  async #hasAlerts(paymasterId: string): Promise<boolean> {
    const known = this.#alertsOn.get(paymasterId);
    if (known && known.untilMs > this.#deps.now()) return known.on;
    const on = await alertsWanted(this.#deps.db, paymasterId);
    this.#alertsOn.set(paymasterId, { on, untilMs: this.#deps.now() + SETTINGS_TTL_MS });
    return on;
  }

  #track(work: Promise<void>): void {
    this.#pending.add(work);
    void work.finally(() => this.#pending.delete(work));
  }
}
