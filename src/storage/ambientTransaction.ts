import { AsyncLocalStorage } from "node:async_hooks";
import type { Database, Queryable } from "./database";

interface Open {
  tx: Queryable;
  /** Run once the transaction committed (never after a rollback). */
  afterCommit: (() => void)[];
  /** False once the transaction ended: work it started and left running goes to the database again. */
  open: boolean;
}

/**
 * A transaction that whatever runs inside `run` joins without being handed it: the management use cases write through
 * `database`, and a write route runs them inside `run`, so that the change and its audit entry commit together (or
 * neither does) without every use case taking a transaction argument. Outside `run`, `database` is the database.
 *
 * A transaction asked for inside `run` is the open one (no nesting). Work started inside and still running after the
 * end (a promise nobody awaited) uses the database, never a finished transaction.
 */
export class AmbientTransactions {
  readonly #current = new AsyncLocalStorage<Open>();
  /** Runs under way: the storage is switched off when the last one ends. */
  #running = 0;
  readonly database: Database;

  constructor(private readonly db: Database) {
    const current = () => {
      const state = this.#current.getStore();
      return state?.open ? state.tx : undefined;
    };
    this.database = {
      kind: db.kind,
      query: (sql, params) => (current() ?? db).query(sql, params),
      exec: (sql) => (current() ?? db).exec(sql),
      transaction: (work) => {
        const tx = current();
        return tx ? work(tx) : db.transaction(work);
      },
      listen: (channel, handlers) => db.listen(channel, handlers),
      close: () => db.close(),
    };
  }

  /** Runs `work` in one transaction that `database` joins while it runs. */
  async run<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const afterCommit: (() => void)[] = [];
    const result = await this.db.transaction(async (tx) => {
      const state: Open = { tx, afterCommit, open: true };
      this.#running++;
      try {
        return await this.#current.run(state, () => work(tx));
      } finally {
        state.open = false;
        // Until Node 24, an AsyncLocalStorage that has run keeps promise hooks on for every promise of the process,
        // sponsorships included (about 5 % of their CPU, measured in docs/performance.md). With no run open, nothing
        // can find an open transaction anyway (work left running sees `open` false), so the hooks go off until the
        // next run.
        if (--this.#running === 0) this.#current.disable();
      }
    });
    for (const task of afterCommit) task();
    return result;
  }

  /**
   * Runs `task` once the open transaction has committed, or now outside one: what must not happen before the change is
   * visible (a cache forgetting a revoked token would otherwise reload it from the uncommitted state).
   */
  afterCommit(task: () => void): void {
    const state = this.#current.getStore();
    if (state?.open) state.afterCommit.push(task);
    else task();
  }
}
