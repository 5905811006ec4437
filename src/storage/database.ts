import { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import { type ChannelHandlers, type ChannelListener, listenOnPostgres, NotificationBarriers } from "./pgListener";
import { createPgliteCluster } from "./pgliteCluster";

/** What a repository needs: parameterised SQL in the PostgreSQL dialect, the same on PGlite and PostgreSQL. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly kind: "pglite" | "postgres";
  /** Runs `work` in one transaction: everything it wrote is committed together or not at all. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Listens to a channel of notifications (pg_notify), from this process and, on PostgreSQL, from every process on
   * the same database. On PGlite a notification is delivered before the statement that committed it returns; on
   * PostgreSQL shortly after the commit, on a connection of its own that reports its losses (`down`).
   *
   * A channel is shared by every schema of the database, so senders prefix the payload with their tables' schema
   * ("schema:rest"): only this database's schema is delivered, without the prefix. Tests run many schemas on one
   * database, and so may deployments; another schema's changes are not ours to act on.
   */
  listen(channel: string, handlers: ChannelHandlers): Promise<ChannelListener>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL connection string; without it the embedded PGlite is used. */
  url?: string;
  /** PGlite data folder; without it (and without `url`) the database lives in memory. */
  dataDir?: string;
  /** PostgreSQL only: the schema every connection works in (tests use one schema each). */
  schema?: string;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openPostgres(options.url, options.schema) : openPglite(options.dataDir);
}

/**
 * PostgreSQL's default of 128 MB of shared buffers lives in PGlite's WebAssembly memory, touched from the start and
 * never given back: 125 MB of the process's memory. 16 MB holds the hot pages of the sponsorship path (the paymaster
 * rows, the latest index pages, the limits' usage rows); older pages come from the operating system's file cache.
 * Measured with the sponsorship bench, A/B in the same rounds: see docs/performance.md, "Memory".
 */
const PGLITE_SHARED_BUFFERS = "16MB";

/** A data folder that does not exist yet gets its cluster from a child process: see pgliteCluster.ts. */
async function openPglite(dataDir: string | undefined): Promise<Database> {
  const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
  if (dataDir) await createPgliteCluster(dataDir, startParams);
  const db = new PGlite({ dataDir, startParams });
  await db.waitReady;
  return pgliteDatabase(db);
}

/** Our interface over a started PGlite instance (tests also start one from a snapshot). */
export function pgliteDatabase(db: PGlite): Database {
  const query = <Row>(sql: string, params?: unknown[]) => mapped(async () => (await db.query<Row>(sql, params)).rows);
  return {
    kind: "pglite",
    query,
    exec: async (sql) => {
      await db.exec(sql);
    },
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: <Row>(sql: string, params?: unknown[]) => mapped(async () => (await tx.query<Row>(sql, params)).rows),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
    async listen(channel, handlers) {
      // One process owns the data: the listener cannot lose its connection, so it is up from the start to the end.
      const own = ownSchemaOnly(PGLITE_SCHEMA, handlers);
      const barriers = new NotificationBarriers();
      const unlisten = await db.listen(channel, (payload) => {
        if (!barriers.took(payload)) own.notify(payload);
      });
      let closed = false;
      handlers.up();
      return {
        backendPid: undefined,
        // Delivered before the NOTIFY returns, as every notification here: the same round trip as on PostgreSQL.
        barrier: () =>
          closed || db.closed
            ? Promise.reject(new Error("the listener is closed"))
            : barriers.pass((payload) => db.query(`NOTIFY ${channel}, '${payload}'`)),
        close: async () => {
          closed = true;
          barriers.failAll("the listener closed before its barrier came back");
          if (!db.closed) await unlisten();
        },
      };
    },
    close: () => db.close(),
  };
}

/** Named statements per process: enough for every fixed statement of the service, and a bound on any other kind. */
const MAX_NAMED_STATEMENTS = 256;

/**
 * Parameterised statements go by name, so that each connection parses and plans them once instead of on every call
 * (the sponsorship path's statements ran their planning on every batch). The text names the statement: the same text
 * always gets the same name.
 */
function namedStatements() {
  const names = new Map<string, string>();
  return (text: string, values: unknown[] | undefined): pg.QueryConfig => {
    if (values === undefined || values.length === 0) return { text };
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `paymaster_${names.size}`;
      names.set(text, name);
    }
    return name === undefined ? { text, values } : { name, text, values };
  };
}

/** PGlite's tables are in the default schema. */
const PGLITE_SCHEMA = "public";

/** The handlers, given only notifications whose payload starts with "schema:", and that prefix taken off. */
function ownSchemaOnly(schema: string, handlers: ChannelHandlers): ChannelHandlers {
  const prefix = `${schema}:`;
  return {
    ...handlers,
    notify: (payload) => {
      if (payload.startsWith(prefix)) handlers.notify(payload.slice(prefix.length));
    },
  };
}

async function openPostgres(url: string, schema: string | undefined): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  // The schema the tables live in (the first of the search path that exists): notifications are filtered by it.
  const client = await pool.connect();
  const ownSchema = (await client.query<{ schema: string }>("SELECT current_schema() AS schema")).rows[0]?.schema;
  client.release();
  const statement = namedStatements();
  const query = <Row>(sql: string, params?: unknown[]) =>
    mapped(async () => (await pool.query(statement(sql, params))).rows as Row[]);
  return {
    kind: "postgres",
    query,
    exec: async (sql) => {
      await pool.query(sql);
    },
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await work({
          query: <Row>(sql: string, params?: unknown[]) =>
            mapped(async () => (await client.query(statement(sql, params))).rows as Row[]),
          exec: async (sql) => {
            await client.query(sql);
          },
        });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
    listen: (channel, handlers) => listenOnPostgres(url, channel, ownSchemaOnly(ownSchema ?? "public", handlers)),
    close: () => pool.end(),
  };
}

/**
 * A write refused because a unique constraint already holds the value. Storage throws this (never an HTTP or RPC
 * error); the action that wrote decides what it means to the client, by the constraint's name.
 */
export class UniqueViolation extends Error {
  constructor(
    readonly constraint: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`unique constraint ${constraint ?? "(unnamed)"} violated`, options);
    this.name = "UniqueViolation";
  }
}

/**
 * A write refused because its text holds a character PostgreSQL cannot store: U+0000, in a text column or in JSON.
 * Such a value could never be stored, so it is the request's fault; the caller says so in its own words.
 */
export class UnstorableText extends Error {
  constructor(options?: { cause?: unknown }) {
    super("text with the NUL character (U+0000) cannot be stored", options);
    this.name = "UnstorableText";
  }
}

/** PostgreSQL's SQLSTATE for unique_violation, the same on PGlite. */
const UNIQUE_VIOLATION = "23505";
/** character_not_in_repertoire: U+0000 in a text value. */
const NUL_IN_TEXT = "22021";
/** untranslatable_character: \u0000 in JSON bound for a jsonb column. */
const NUL_IN_JSON = "22P05";

/** Database errors the callers act on, by SQLSTATE code, become storage errors; anything else passes unchanged. */
function storageError(error: unknown): unknown {
  const e = error as { code?: unknown; constraint?: unknown } | null;
  if (e?.code === UNIQUE_VIOLATION) {
    return new UniqueViolation(typeof e.constraint === "string" ? e.constraint : undefined, { cause: error });
  }
  if (e?.code === NUL_IN_TEXT || e?.code === NUL_IN_JSON) return new UnstorableText({ cause: error });
  return error;
}

/** Runs one call to the database, mapping its errors once for every repository. */
async function mapped<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storageError(error);
  }
}
