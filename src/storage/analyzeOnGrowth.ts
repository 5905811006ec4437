import type { Database } from "./database";

/**
 * PostgreSQL's autovacuum defaults: a table is analyzed again once this many rows plus this share of it changed.
 * Analyzing only once a table doubled (a share of 1) was measured A/B and saved nothing beyond the noise
 * (docs/performance.md, "Tried and taken back").
 */
const ANALYZE_THRESHOLD = 50;
const ANALYZE_SCALE_FACTOR = 0.1;

/**
 * What the analysis reads: the columns the ledger's filters and pages use, with a tenth of PostgreSQL's default
 * statistics target, so that it samples 3,000 rows instead of 30,000 and skips the wide ones (rule outcomes, gas
 * fields). PGlite runs it on the thread that serves sponsorships: a whole-table ANALYZE at 20,000 rows held it for
 * about 300 ms, and rose with the table, which every request then waited out (docs/performance.md, "Memory" and the
 * ledger). reltuples, which the metrics read, is set all the same.
 */
export const EMBEDDED_LEDGER_ANALYZE = `SET default_statistics_target = 10;
ANALYZE sponsorships (paymaster_id, sender, sponsored, settled_at, released_at, created_at, valid_until);
RESET default_statistics_target`;

/**
 * The contracts' list pages walk (paymaster_id, created_at, id) after a cursor; without statistics PGlite's planner
 * read and sorted all of a paymaster's rows for each page instead (8.4 against 3.3 ms at 10,000 contracts).
 */
export const EMBEDDED_CONTRACTS_ANALYZE = "ANALYZE smart_contracts (paymaster_id, created_at, id)";

const STATEMENTS = { sponsorships: EMBEDDED_LEDGER_ANALYZE, smart_contracts: EMBEDDED_CONTRACTS_ANALYZE };

/**
 * On the embedded database, analyzes a growing table the way PostgreSQL's autovacuum would: PGlite runs none, so its
 * planner would never learn that a paymaster has a million ledger rows and would read and sort them all for a page
 * instead of walking the ledger's index (docs/performance.md, 'Sponsorship ledger'). Counts the rows this process
 * writes (the embedded database has no other writer); on PostgreSQL it does nothing.
 */
export class AnalyzeOnGrowth {
  readonly #db: Database;
  readonly #table: keyof typeof STATEMENTS;
  /** Rows at the last analysis, once read; and rows written since. */
  #analyzedRows: number | undefined;
  #written = 0;
  #running = false;

  constructor(db: Database, table: keyof typeof STATEMENTS) {
    this.#db = db;
    this.#table = table;
  }

  wrote(rows: number): void {
    if (this.#db.kind !== "pglite") return;
    this.#written += rows;
    if (this.#running) return;
    const due = ANALYZE_THRESHOLD + ANALYZE_SCALE_FACTOR * (this.#analyzedRows ?? 0);
    if (this.#analyzedRows !== undefined && this.#written < due) return;
    this.#running = true;
    void this.#analyzeIfDue()
      .catch(() => {
        // Statistics are an optimisation: a failed analysis is tried again after the next writes.
      })
      .finally(() => {
        this.#running = false;
      });
  }

  async #analyzeIfDue(): Promise<void> {
    if (this.#analyzedRows === undefined) {
      // First write of this process: the statistics kept in the data folder tell how big the table was analyzed.
      const [row] = await this.#db.query<{ rows: string | number | null }>(
        "SELECT reltuples::bigint::text AS rows FROM pg_class WHERE oid = to_regclass($1)",
        [this.#table],
      );
      const rows = Number(row?.rows ?? -1);
      if (rows >= 0) {
        this.#analyzedRows = rows;
        if (this.#written < ANALYZE_THRESHOLD + ANALYZE_SCALE_FACTOR * rows) return;
      }
    }
    const written = this.#written;
    await this.#db.exec(STATEMENTS[this.#table]);
    const [row] = await this.#db.query<{ rows: string | number | null }>(
      "SELECT reltuples::bigint::text AS rows FROM pg_class WHERE oid = to_regclass($1)",
      [this.#table],
    );
    this.#analyzedRows = Math.max(0, Number(row?.rows ?? 0));
    this.#written -= written;
  }
}
