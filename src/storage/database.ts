import { PGlite } from "@electric-sql/pglite";
import pg from "pg";

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

async function openPglite(dataDir: string | undefined): Promise<Database> {
  const db = dataDir ? new PGlite(dataDir) : new PGlite();
  await db.waitReady;
  return pgliteDatabase(db);
}

/** Our interface over a started PGlite instance (tests also start one from a snapshot). */
export function pgliteDatabase(db: PGlite): Database {
  const query = async <Row>(sql: string, params?: unknown[]) => (await db.query<Row>(sql, params)).rows;
  return {
    kind: "pglite",
    query,
    exec: async (sql) => {
      await db.exec(sql);
    },
    transaction: (work) =>
      db.transaction((tx) =>
        work({
          query: async <Row>(sql: string, params?: unknown[]) => (await tx.query<Row>(sql, params)).rows,
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
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

async function openPostgres(url: string, schema: string | undefined): Promise<Database> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5000,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  const client = await pool.connect();
  client.release();
  const statement = namedStatements();
  const query = async <Row>(sql: string, params?: unknown[]) =>
    (await pool.query(statement(sql, params))).rows as Row[];
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
          query: async <Row>(sql: string, params?: unknown[]) =>
            (await client.query(statement(sql, params))).rows as Row[],
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
    close: () => pool.end(),
  };
}

/** PostgreSQL's unique_violation; repositories turn it into the interface's "already exists" errors. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string; message?: string };
  if (e?.code !== "23505") return false;
  if (!constraint) return true;
  return e.constraint === constraint || (e.message ?? "").includes(constraint);
}
