/** What a group commit reports after each batch: its size, its time and whether it committed (the metrics hook). */
export type BatchObserver = (size: number, seconds: number, ok: boolean) => void;

interface Pending<In, Out> {
  item: In;
  resolve(result: Out): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted while a batch is under way go together into the next one. Each caller still waits
 * for its own result, so nothing is answered before it is durable; but 50 concurrent requests cost two statements,
 * not 50 (on PGlite, one statement at a time runs on the event loop and costs 100 µs and more).
 */
export class Batcher<In, Out> {
  #pending: Pending<In, Out>[] = [];
  #running = false;

  /** @param run handles a batch in one statement and returns one result per item, in order */
  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    /** Told each batch's size and time (the group-commit metrics). */
    private readonly observe?: BatchObserver,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
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
      const started = performance.now();
      try {
        const results = await this.run(batch.map((p) => p.item));
        this.observe?.(batch.length, (performance.now() - started) / 1000, true);
        for (const [i, p] of batch.entries()) p.resolve(results[i] as Out);
      } catch (error) {
        this.observe?.(batch.length, (performance.now() - started) / 1000, false);
        for (const p of batch) p.reject(error);
      }
    }
    this.#running = false;
  }
}
