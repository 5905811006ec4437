import { Worker } from "node:worker_threads";
import type { Database, Queryable } from "./database";

interface Reply {
  id: number;
  result?: unknown;
  error?: { message: string; name?: string; [field: string]: unknown };
}

/** An error of the database thread, with PostgreSQL's fields (code, constraint, detail, …) as PGlite gives them. */
export class DatabaseError extends Error {
  code?: string;
  constraint?: string;
}

/**
 * The embedded PGlite database of `dataDir`, run on a worker thread (src/storage/pgliteWorker.mjs) so that its
 * statements do not take turns with HTTP, hashing and signing on the event loop. Same `Database` as in-thread PGlite:
 * statements of a transaction run in it, others wait for it to end, as PGlite itself orders them.
 */
export async function openPgliteWorker(dataDir: string): Promise<Database> {
  const worker = new Worker(new URL("./pgliteWorker.mjs", import.meta.url), { workerData: { dataDir } });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 0;
  let nextTransaction = 0;
  let failure: Error | undefined;

  const failAll = (error: Error) => {
    failure = error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  worker.on("message", (reply: Reply) => {
    const waiting = pending.get(reply.id);
    if (!waiting) return;
    pending.delete(reply.id);
    if (reply.error) waiting.reject(Object.assign(new DatabaseError(reply.error.message), reply.error));
    else waiting.resolve(reply.result);
  });
  worker.on("error", (error) => failAll(new Error(`the database thread failed: ${error.message}`)));
  worker.on("exit", (code) => failAll(new Error(`the database thread exited with code ${code}`)));

  const send = <T>(request: Record<string, unknown>): Promise<T> => {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      worker.postMessage({ ...request, id });
    });
  };
  const within = (tx: number | undefined): Queryable => ({
    query: <Row>(sql: string, params?: unknown[]) => send<Row[]>({ op: "query", sql, params, tx }),
    exec: (sql: string) => send<void>({ op: "exec", sql, tx }),
  });

  try {
    await send({ op: "ready" });
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return {
    kind: "pglite",
    ...within(undefined),
    async transaction(work) {
      const tx = ++nextTransaction;
      await send({ op: "begin", tx });
      let result: Awaited<ReturnType<typeof work>>;
      try {
        result = await work(within(tx));
      } catch (error) {
        await send({ op: "rollback", tx });
        throw error;
      }
      await send({ op: "commit", tx });
      return result;
    },
    async close() {
      try {
        await send({ op: "close" });
      } finally {
        await worker.terminate();
      }
    },
  };
}
