import { randomBytes } from "node:crypto";
import type { FastifyBaseLogger } from "fastify";
import type { Metrics } from "../metrics/metrics";
import type { Database } from "../storage/database";
import {
  type Attempt,
  type ClaimedEndpoint,
  claimEndpoints,
  disableFailingEndpoint,
  dropLeases,
  type Lease,
  nextDeliveries,
  pruneEvents,
  publicEventId,
  type QueuedDelivery,
  recordAttempts,
  releaseLease,
  sequenceDeliveries,
  undeliveredCount,
} from "../storage/eventOutbox";
import { EVENTS_CHANNEL } from "../storage/migrations";
import type { ChannelListener } from "../storage/pgListener";
import type { GuardPolicy } from "../webhooks/addressGuard";
import { type CallResult, callWebhook } from "../webhooks/call";
import type { WebhookSettings } from "../webhooks/settings";
import { openSecret } from "./sealedSecret";
import { standardHeaders } from "./standardSignature";

/** How delivery paces itself (main.ts: DEFAULT_EVENT_TIMERS; tests: shorter). */
export interface EventTimers {
  /**
   * How often every instance looks for due work besides the notifications: another instance's lease that ran out, a
   * notification lost while the listener was down. Absent: on notifications and this process's own retry timers only.
   */
  pollMs?: number;
  /** The first retry's wait; each next one doubles it, up to `maxRetryMs`, less a random part of up to half. */
  firstRetryMs: number;
  maxRetryMs: number;
  /** An endpoint whose deliveries have failed for this long is turned off, and the account alerted. */
  disableAfterMs: number;
  /** Attempts, and events delivered everywhere, are kept this long (a replay reaches back this far). */
  keepMs: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** About a day of retries: 5 s, 10 s, 20 s … an hour apart at most, then the endpoint is turned off. */
export const DEFAULT_EVENT_TIMERS: EventTimers = {
  pollMs: 1_000,
  firstRetryMs: 5_000,
  maxRetryMs: 60 * 60 * 1000,
  disableAfterMs: DAY_MS,
  keepMs: 30 * DAY_MS,
};

/** Endpoints one process delivers to at once, each one delivery at a time (their order). */
const PARALLEL_ENDPOINTS = 20;
/**
 * Deliveries read per query from an endpoint's queue, and written down together after their calls: what a process
 * that dies mid-batch has sent and not yet written is sent again, so this bounds the repeats a crash can cause.
 */
export const DELIVERY_BATCH = 10;
/** How often the backlog gauge is read again and old rows pruned, at most. */
const BACKLOG_EVERY_MS = 1_000;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * The wait before attempt `attempts + 1`: exponential, with "equal jitter" (half the wait fixed, half random), so
 * that endpoints failing together do not all come back at the same moment.
 */
export function retryDelayMs(attempts: number, timers: EventTimers, random: () => number = Math.random): number {
  const wait = Math.min(timers.maxRetryMs, timers.firstRetryMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(wait / 2 + (random() * wait) / 2);
}

/** Any 2xx delivers an event; the body is not read for meaning. */
const delivered = (): CallResult => ({ ok: true });

export interface EventDeliveryDeps {
  db: Database;
  settings: WebhookSettings;
  guard: GuardPolicy;
  now: () => number;
  log: FastifyBaseLogger;
  metrics: Metrics;
  timers: EventTimers;
}

/**
 * Delivers the outbox (docs/events.md). Each endpoint's queue is worked by one instance at a time, which holds its
 * lease: it numbers what is new, then sends the queue's head, one delivery after the other, so that none overtakes
 * another; a failure stops the queue until its retry is due. A notification from the database (a transaction queued
 * deliveries, on any instance) and this process's retry timer start work at once; the poll finds the rest.
 */
export class EventDelivery {
  readonly #deps: EventDeliveryDeps;
  readonly #active = new Map<string, Promise<void>>();
  #claiming: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #listener: ChannelListener | undefined;
  #poll: NodeJS.Timeout | undefined;
  #retry: { timer: NodeJS.Timeout; atMs: number } | undefined;
  #backlogReadMs = 0;
  #prunedMs = 0;

  constructor(deps: EventDeliveryDeps) {
    this.#deps = deps;
  }

  /** Listens for queued deliveries and starts the poll; the embedded database's leases are all a dead process's. */
  async start(): Promise<void> {
    const { db, timers } = this.#deps;
    if (db.kind === "pglite") await dropLeases(db);
    this.#listener = await db.listen(EVENTS_CHANNEL, {
      notify: () => this.kick(),
      // Back after a loss: what was queued meanwhile was not heard of.
      up: () => this.kick(),
      down: () => {},
    });
    if (timers.pollMs !== undefined) this.#poll = setInterval(() => this.kick(), timers.pollMs).unref();
    this.kick();
  }

  /** Looks for work now, or once more after the look under way. Never throws. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#claiming) {
      this.#again = true;
      return;
    }
    this.#claiming = this.#claimAll().finally(() => {
      this.#claiming = undefined;
    });
  }

  /** Resolves once nothing is being claimed or delivered (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.#claiming || this.#active.size > 0) {
      await this.#claiming;
      await Promise.all(this.#active.values());
    }
  }

  /** Stops looking for work and waits for the deliveries under way (each bounded by the call's timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#poll) clearInterval(this.#poll);
    if (this.#retry) clearTimeout(this.#retry.timer);
    await this.#listener?.close();
    await this.idle();
  }

  async #claimAll(): Promise<void> {
    const { db, now, settings, log } = this.#deps;
    do {
      this.#again = false;
      try {
        await this.#housekeeping();
        const free = PARALLEL_ENDPOINTS - this.#active.size;
        if (free <= 0) return;
        // The lease outlasts one attempt (the call's whole timeout) with room to write its outcome.
        const claimed = await claimEndpoints(db, now(), settings.timeoutMs + 30_000, free, [...this.#active.keys()]);
        for (const endpoint of claimed) this.#track(endpoint);
      } catch (error) {
        if (!this.#stopped) log.error({ err: error }, "event delivery: claiming endpoints failed");
      }
    } while (this.#again && !this.#stopped);
  }

  #track(endpoint: ClaimedEndpoint): void {
    const work = this.#drain(endpoint)
      .catch((error: unknown) => {
        this.#deps.log.error({ err: error, endpointId: endpoint.endpointId }, "event delivery failed");
      })
      .finally(() => {
        this.#active.delete(endpoint.endpointId);
        // More may have been queued meanwhile, or another endpoint waited for a free place.
        this.kick();
      });
    this.#active.set(endpoint.endpointId, work);
  }

  /**
   * Works one endpoint's queue while its lease lasts; hands the endpoint back when done or when its head failed. The
   * outcomes are written in one statement per batch, after the calls: a delivery made and not yet written when the
   * process dies is made again (at least once, with its id), never skipped.
   */
  async #drain(endpoint: ClaimedEndpoint): Promise<void> {
    const { db, now, settings } = this.#deps;
    const lease: Lease = { endpointId: endpoint.endpointId, leaseToken: endpoint.leaseToken };
    try {
      // Opened once per lease; an unopenable secret fails every attempt the same way (and ends in the endpoint off).
      let secrets: string[] | Error;
      try {
        secrets = this.#secrets(endpoint);
      } catch (error) {
        secrets = error as Error;
      }
      for (;;) {
        await sequenceDeliveries(db, lease);
        const queue = await nextDeliveries(db, endpoint.endpointId, DELIVERY_BATCH);
        if (queue.length === 0) return;
        const made: Attempt[] = [];
        for (const delivery of queue) {
          // Never start an attempt the lease may not outlast: another instance would take the endpoint meanwhile.
          if (this.#stopped || now() + settings.timeoutMs + 5_000 > endpoint.leaseUntilMs) break;
          const attempt = await this.#attempt(endpoint, delivery, secrets);
          made.push(attempt);
          if (!attempt.outcome.delivered) break;
        }
        if (!(await this.#record(endpoint, lease, made)) || made.length < queue.length) return;
      }
    } finally {
      await releaseLease(db, lease);
    }
  }

  /** One attempt at the head of the queue, signed with the secrets that sign now. */
  async #attempt(endpoint: ClaimedEndpoint, delivery: QueuedDelivery, secrets: string[] | Error): Promise<Attempt> {
    const { now, settings, guard, metrics } = this.#deps;
    const id = publicEventId(delivery.eventId);
    const body = JSON.stringify({
      id,
      type: delivery.type,
      sequence: delivery.sequence,
      timestamp: new Date(delivery.atMs).toISOString(),
      data: delivery.data,
    });
    const startedMs = Date.now();
    let result: CallResult;
    try {
      if (secrets instanceof Error) throw secrets;
      result = await callWebhook(
        { method: "POST", url: endpoint.url, body },
        {
          guard,
          timeoutMs: settings.timeoutMs,
          lookup: settings.lookup,
          nowMs: now,
          verdict: delivered,
          signedHeaders: (timestamp, signedText) => standardHeaders(secrets, id, timestamp, signedText),
        },
      );
    } catch (error) {
      result = { ok: false, reason: (error as Error).message };
    }
    const atMs = now();
    metrics.eventDeliveries.inc({ outcome: result.ok ? "delivered" : "failed" });
    if (result.ok) metrics.eventDelaySeconds.observe(Math.max(0, atMs - delivery.atMs) / 1000);
    return {
      delivery,
      outcome: {
        id: orderedUuid(),
        delivered: result.ok,
        statusCode: result.status ?? null,
        error: result.ok ? null : result.reason,
        durationMs: Date.now() - startedMs,
        atMs,
      },
    };
  }

  /** Writes a batch's attempts; false when the lease was lost, or the head failed (the queue then waits). */
  async #record(endpoint: ClaimedEndpoint, lease: Lease, made: Attempt[]): Promise<boolean> {
    const last = made.at(-1);
    if (!last) return false;
    const { db, timers } = this.#deps;
    const next = last.outcome.atMs + retryDelayMs(last.delivery.attempts + 1, timers);
    const recorded = await recordAttempts(db, lease, made, next);
    if (!recorded) return false;
    if (last.outcome.delivered) return true;
    await this.#failed(endpoint, lease, last.delivery, last.outcome.error ?? "failed", recorded.failingSinceMs, next);
    return false;
  }

  /** A failed head: the endpoint waits for its retry, or is turned off once it has failed for too long. */
  async #failed(
    endpoint: ClaimedEndpoint,
    lease: Lease,
    delivery: QueuedDelivery,
    reason: string,
    failingSinceMs: number | null,
    nextMs: number,
  ): Promise<void> {
    const { db, now, log, metrics, timers } = this.#deps;
    // The host only: a URL may carry a secret of the dApp's.
    const where = { endpointId: endpoint.endpointId, paymasterId: endpoint.paymasterId, host: hostOf(endpoint.url) };
    const nowMs = now();
    if (failingSinceMs !== null && nowMs - failingSinceMs >= timers.disableAfterMs) {
      const since = new Date(failingSinceMs).toISOString();
      const why = `every delivery failed since ${since} (last: ${reason})`;
      const alert = JSON.stringify({
        event: "endpoint.disabled",
        paymasterId: endpoint.paymasterId,
        endpointId: endpoint.endpointId,
        failingSince: since,
        reason,
        pending: delivery.sequence,
        at: new Date(nowMs).toISOString(),
      });
      if (await disableFailingEndpoint(db, lease, why, alert, nowMs)) {
        metrics.eventEndpointsDisabled.inc();
        log.warn(
          { ...where, failingSince: since, reason },
          "event endpoint turned off: its deliveries failed for a day",
        );
      }
      return;
    }
    log.info({ ...where, sequence: delivery.sequence, reason }, "event delivery failed; tried again later");
    this.#retryAt(nextMs);
  }

  /** The secrets that sign now: the current one, and a rotation's previous one during its grace period. */
  #secrets(endpoint: ClaimedEndpoint): string[] {
    const key = this.#deps.settings.signingKey;
    const secrets = [openSecret(key, endpoint.endpointId, endpoint.secret)];
    if (endpoint.previousSecret && (endpoint.previousSecretUntilMs ?? 0) > this.#deps.now()) {
      secrets.push(openSecret(key, endpoint.endpointId, endpoint.previousSecret));
    }
    return secrets;
  }

  /** Looks again when the earliest retry this process scheduled is due (by the service's clock, waited in real time). */
  #retryAt(atMs: number): void {
    if (this.#stopped || (this.#retry && this.#retry.atMs <= atMs)) return;
    if (this.#retry) clearTimeout(this.#retry.timer);
    const timer = setTimeout(
      () => {
        this.#retry = undefined;
        this.kick();
      },
      Math.max(0, atMs - this.#deps.now()),
    );
    timer.unref();
    this.#retry = { timer, atMs };
  }

  /** The backlog gauge, at most once a second, and the pruning of old rows, at most once an hour. */
  async #housekeeping(): Promise<void> {
    const { db, now, metrics, timers } = this.#deps;
    const nowMs = now();
    if (nowMs - this.#backlogReadMs >= BACKLOG_EVERY_MS) {
      this.#backlogReadMs = nowMs;
      metrics.eventBacklog.set(await undeliveredCount(db));
    }
    if (nowMs - this.#prunedMs >= PRUNE_EVERY_MS) {
      this.#prunedMs = nowMs;
      await pruneEvents(db, nowMs - timers.keepMs);
    }
  }
}

let lastUuidMs = 0;
let uuidCounter = 0;

/**
 * A UUID (version 7's layout) that sorts after every one this process made before: the time in ms, then a counter.
 * The attempts of one batch are written in one statement, so they share their creation instant; their ids then keep
 * them in the order they were made, for the deliveries list.
 */
function orderedUuid(): string {
  const ms = Math.max(Date.now(), lastUuidMs);
  uuidCounter = ms === lastUuidMs ? uuidCounter + 1 : 0;
  lastUuidMs = uuidCounter > 0xfff ? ms + 1 : ms;
  if (uuidCounter > 0xfff) uuidCounter = 0;
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastUuidMs, 0, 6);
  bytes.writeUInt16BE(0x7000 | uuidCounter, 6);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const hostOf = (url: string): string => (URL.canParse(url) ? new URL(url).host : "(invalid url)");
