// PGlite plans every parameterised statement anew: it takes no named statements, so each call parses and plans its
// text again. For the record batch's statement (three inserts, 23 to 34 array parameters) that planning cost about
// 1.5 ms per batch, more than the rows themselves at small batches (docs/performance.md). Here such a statement is
// planned once per database with PREPARE, and each call is an EXECUTE whose parameters travel as literals.
import { createHash } from "node:crypto";
import { types } from "@electric-sql/pglite";
import type { Database } from "./database";

/** One parameter: an array of texts (or nulls) that the statement casts to the element type it needs. */
export type ArrayParameter = readonly (string | null)[];

/** text[]'s type id: its literal form (braces, double quotes, backslash escapes) is the one every array type reads. */
const TEXT_ARRAY = 1009;

/** invalid_sql_statement_name: the session has no statement of that name (something deallocated it). */
const NO_SUCH_STATEMENT = "26000";

/**
 * An array as a SQL string literal: PGlite's own array serializer writes the array's text form (every element
 * quoted, `"` and `\` escaped, null as NULL), and the single quotes of the literal are doubled, which is all a
 * string literal needs while standard_conforming_strings is on (checked once per database, before the first use).
 */
function arrayLiteral(values: ArrayParameter): string {
  return `'${types.arraySerializer(values, undefined, TEXT_ARRAY).replaceAll("'", "''")}'`;
}

/** duplicate_prepared_statement: prepared already, by another caller on the same database. */
const ALREADY_PREPARED = "42P05";

/**
 * The statements prepared on one PGlite database. A statement's name is a hash of its text, so every caller that
 * shares the database shares the statement too: a name prepared already holds the same text.
 */
export class PglitePrepared {
  readonly #db: Database;
  /** The names of the texts known to be prepared in the database's session. */
  readonly #prepared = new Map<string, string>();
  #checked: Promise<void> | undefined;

  constructor(db: Database) {
    if (db.kind !== "pglite") throw new Error("PglitePrepared serves the embedded database only");
    this.#db = db;
  }

  /** Runs `sql` (parameters `$1`… each an array) with `params`; rows are not returned. */
  async run(sql: string, params: readonly ArrayParameter[]): Promise<void> {
    const execute = `EXECUTE ${await this.#prepare(sql)}(${params.map(arrayLiteral).join(", ")})`;
    try {
      await this.#db.exec(execute);
    } catch (error) {
      if ((error as { code?: string }).code !== NO_SUCH_STATEMENT) throw error;
      // Deallocated behind our back (DEALLOCATE ALL, DISCARD ALL): prepare it again, once.
      this.#prepared.delete(sql);
      await this.#prepare(sql);
      await this.#db.exec(execute);
    }
  }

  /** The statement's name, prepared first if this database's session may not have it. */
  async #prepare(sql: string): Promise<string> {
    const known = this.#prepared.get(sql);
    if (known) return known;
    this.#checked ??= this.#checkLiterals();
    await this.#checked;
    const name = statementName(sql);
    try {
      await this.#db.exec(`PREPARE ${name} AS ${sql}`);
    } catch (error) {
      if ((error as { code?: string }).code !== ALREADY_PREPARED) throw error;
    }
    this.#prepared.set(sql, name);
    return name;
  }

  /** Doubled single quotes are the whole escaping only with standard_conforming_strings on: refuse to run without. */
  async #checkLiterals(): Promise<void> {
    const [row] = await this.#db.query<{ on: string }>("SELECT current_setting('standard_conforming_strings') AS on");
    if (row?.on !== "on") {
      this.#checked = undefined;
      throw new Error("standard_conforming_strings is off: prepared statements' literals would not be read as written");
    }
  }
}

function statementName(sql: string): string {
  return `paymaster_${createHash("sha256").update(sql).digest("hex").slice(0, 24)}`;
}

const prepared = new WeakMap<Database, PglitePrepared>();

/** The one PglitePrepared of an embedded database. */
export function pglitePreparedOf(db: Database): PglitePrepared {
  let statements = prepared.get(db);
  if (!statements) {
    statements = new PglitePrepared(db);
    prepared.set(db, statements);
  }
  return statements;
}
