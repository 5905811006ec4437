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
  close(): Promise<void>;
}

export interface PgListenerOptions {
  /** First wait before reconnecting after a loss (ms); it doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
  /** How often the connection is checked with a query (ms): a silently dead connection is found within this. */
  heartbeatMs?: number;
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

  const lost = (lostClient: pg.Client) => {
    if (client !== lostClient) return;
    client = undefined;
    backendPid = undefined;
    clearInterval(heartbeat);
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
      if (message.channel === channel) handlers.notify(message.payload ?? "");
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
    async close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      const current = client;
      client = undefined;
      backendPid = undefined;
      await current?.end().catch(() => {});
    },
  };
}
