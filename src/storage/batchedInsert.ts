import type { Queryable } from "./database";

interface Pending<Row> {
  row: Row;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Group commit: rows inserted while a write is under way go together into the next statement. Each caller still
 * waits until its own row is committed, so nothing is answered before it is recorded; but 50 concurrent requests cost
 * two statements, not 50 (on PGlite, one statement at a time runs on the event loop and would cap the service).
 */
export class BatchedInsert<Row> {
  #pending: Pending<Row>[] = [];
  #running = false;

  /**
   * @param sql one INSERT … SELECT … FROM unnest($1::text[], …) statement
   * @param columns turns a batch of rows into one array parameter per column
   */
  constructor(
    private readonly db: Queryable,
    private readonly sql: string,
    private readonly columns: (rows: Row[]) => unknown[][],
    private readonly maxBatch = 500,
  ) {}

  insert(row: Row): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ row, resolve, reject });
      if (!this.#running) {
        this.#running = true;
        // Let the other requests of this turn of the event loop join the first batch.
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending.splice(0, this.maxBatch);
      try {
        await this.db.query(this.sql, this.columns(batch.map((p) => p.row)));
        for (const p of batch) p.resolve();
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.#running = false;
  }
}
