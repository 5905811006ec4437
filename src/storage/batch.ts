interface Pending<In, Out> {
  item: In;
  resolve(result: Out): void;
  reject(error: unknown): void;
}

/**
 * Group commit: items submitted while a batch is under way go together into the next one. Each caller still waits
 * for its own result, so nothing is answered before it is durable; but 50 concurrent requests cost two statements,
 * not 50 (on PGlite, one statement at a time runs on the event loop and costs 100 µs and more).
 *
 * Up to `maxInFlight` batches run at once, so that the next batch is already queued at the database while the
 * previous one's answer travels back (PGlite's thread, a PostgreSQL round trip) and its requests are answered.
 */
export class Batcher<In, Out> {
  #pending: Pending<In, Out>[] = [];
  #inFlight = 0;
  #scheduled = false;

  /** @param run handles a batch in one statement and returns one result per item, in order */
  constructor(
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 2,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ item, resolve, reject });
      this.#schedule();
    });
  }

  /** Let the other requests of this turn of the event loop join the batch. */
  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.maxInFlight || this.#pending.length === 0) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#runOne();
    });
  }

  async #runOne(): Promise<void> {
    if (this.#inFlight >= this.maxInFlight || this.#pending.length === 0) return;
    const batch = this.#pending.splice(0, this.maxBatch);
    this.#inFlight++;
    // What arrives from now on may start the next batch at once.
    this.#schedule();
    try {
      const results = await this.run(batch.map((p) => p.item));
      for (const [i, p] of batch.entries()) p.resolve(results[i] as Out);
    } catch (error) {
      for (const p of batch) p.reject(error);
    } finally {
      this.#inFlight--;
      this.#schedule();
    }
  }
}
