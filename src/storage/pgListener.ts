import { randomUUID } from "node:crypto";
import pg from "pg";

/** What a listener on a channel tells its owner. */
export interface ChannelHandlers {
  /** A notification on the channel, with its payload. */
  notify(payload: string): void;
  /** The channel is listened to (again): notifications from now on arrive; any sent while it was down are lost. */
  up(): void;
  /** The channel is not listened to: notifications sent from now on until the next `up` are lost. */
  down(): void;
}

export interface ChannelListener {
  /** PostgreSQL's process id of the listening connection while it is up (pg_stat_activity.pid), for operators. */
  readonly backendPid: number | undefined;
  /**
   * Sends a notification of its own on the channel and resolves once this listener has received it. Notifications
   * reach a listener in the order their transactions committed, so by then every notification committed before the
   * call has been handed to `notify` (tests wait for this instead of for time). Rejects if the listener is not up, or
   * goes down before its notification comes back. The barrier's payload never reaches `notify`, here or elsewhere.
   */
  barrier(): Promise<void>;
  close(): Promise<void>;
}

export interface PgListenerOptions {
  /** First wait before reconnecting after a loss (ms); it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** How often the connection is checked with a query (ms): a silently dead connection is found within this. */
  heartbeatMs?: number;
}

/** Starts every barrier's payload: no colon, so no "schema:" prefix of a change's payload can match it. */
const BARRIER_PREFIX = "listener barrier ";

/** The barriers of one listener awaiting their own notification, by payload. */
export class NotificationBarriers {
  readonly #waiting = new Map<string, { arrived: () => void; lost: (error: Error) => void }>();

  /** Sends a payload of its own with `send` and resolves once `took` has been given it. */
  pass(send: (payload: string) => Promise<unknown>): Promise<void> {
    const payload = `${BARRIER_PREFIX}${randomUUID()}`;
    const arrived = new Promise<void>((resolve, reject) => {
      this.#waiting.set(payload, { arrived: resolve, lost: reject });
    });
    send(payload).catch((error: unknown) => this.#fail(payload, error));
    return arrived;
  }

  /** Whether `payload` is a barrier (this listener's or another's), which is then not for `notify`. */
  took(payload: string): boolean {
    if (!payload.startsWith(BARRIER_PREFIX)) return false;
    const waiting = this.#waiting.get(payload);
    this.#waiting.delete(payload);
    waiting?.arrived();
    return true;
  }

  /** The listener went down or closed: the barriers still waiting will never be answered. */
  failAll(reason: string): void {
    for (const payload of [...this.#waiting.keys()]) this.#fail(payload, new Error(reason));
  }

  #fail(payload: string, error: unknown): void {
    const waiting = this.#waiting.get(payload);
    this.#waiting.delete(payload);
    waiting?.lost(error instanceof Error ? error : new Error(String(error)));
  }
}

/**
 * LISTEN on a connection of its own (a pooled one would be handed to other work). Every loss of the connection (an
 * error, its end, a heartbeat query that fails or hangs) reports `down` and reconnects with a growing wait; `up` is
 * reported only once LISTEN has succeeded on the new connection.
 */
export async function listenOnPostgres(
  connectionString: string,
  channel: string,
  handlers: ChannelHandlers,
  options: PgListenerOptions = {},
): Promise<ChannelListener> {
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 5000;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  let client: pg.Client | undefined;
  let backendPid: number | undefined;
  let closed = false;
  let nextRetryMs = retryMs;
  let retry: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const barriers = new NotificationBarriers();

  const lost = (lostClient: pg.Client) => {
    if (client !== lostClient) return;
    client = undefined;
    backendPid = undefined;
    clearInterval(heartbeat);
    barriers.failAll("the listener lost its connection before its barrier came back");
    handlers.down();
    lostClient.end().catch(() => {});
    if (closed) return;
    retry = setTimeout(connect, nextRetryMs);
    retry.unref();
    nextRetryMs = Math.min(nextRetryMs * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    // A hung heartbeat is given up client-side after half its period.
    const candidate = new pg.Client({
      connectionString,
      keepAlive: true,
      connectionTimeoutMillis: 5000,
      query_timeout: Math.max(1000, heartbeatMs / 2),
    });
    client = candidate;
    candidate.on("error", () => lost(candidate));
    candidate.on("end", () => lost(candidate));
    candidate.on("notification", (message) => {
      if (message.channel === channel && !barriers.took(message.payload ?? "")) handlers.notify(message.payload ?? "");
    });
    try {
      await candidate.connect();
      await candidate.query(`LISTEN ${channel}`);
      const rows = await candidate.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      if (client !== candidate || closed) return;
      backendPid = rows.rows[0]?.pid;
      nextRetryMs = retryMs;
      heartbeat = setInterval(() => {
        candidate.query("SELECT 1").catch(() => lost(candidate));
      }, heartbeatMs);
      heartbeat.unref();
      handlers.up();
    } catch {
      lost(candidate);
    }
  }

  await connect();
  return {
    get backendPid() {
      return backendPid;
    },
    barrier() {
      const current = client;
      // Up once LISTEN succeeded on this connection (its pid is read after).
      if (!current || backendPid === undefined) return Promise.reject(new Error("the listener is not up"));
      // On the listening connection itself: a session hears its own notifications, in commit order with the others'.
      return barriers.pass((payload) => current.query(`NOTIFY ${channel}, '${payload}'`));
    },
    async close() {
      closed = true;
      barriers.failAll("the listener closed before its barrier came back");
      clearTimeout(retry);
      clearInterval(heartbeat);
      const current = client;
      client = undefined;
      backendPid = undefined;
      await current?.end().catch(() => {});
    },
  };
}
