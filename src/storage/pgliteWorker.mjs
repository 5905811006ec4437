// The embedded database's own thread: PGlite (PostgreSQL compiled to WebAssembly) runs every statement on the thread
// that opened it, and under load it took nearly half of the service's event loop. Here it runs beside the event loop,
// which keeps HTTP, hashing and signing; src/storage/workerDatabase.ts is the other end of the messages.
//
// Plain JavaScript because worker threads start without the TypeScript loader that runs the rest of the service.
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const db = new PGlite(workerData.dataDir);
/** Open transactions by id: their statements go to `tx`, `end` settles them (commit or rollback). */
const transactions = new Map();
const ROLLBACK = Symbol("rollback");

/** What the main thread needs of an error: PostgreSQL's fields survive, since structured cloning keeps only the message. */
function describe(error) {
  const { message, name, code, constraint, detail, table, column, schema } = error ?? {};
  return { message: String(message ?? error), name, code, constraint, detail, table, column, schema };
}

async function handle(request) {
  const { op, sql, params, tx: txId } = request;
  switch (op) {
    case "ready":
      await db.waitReady;
      return undefined;
    case "query":
      return (await (txId ? transactions.get(txId).tx : db).query(sql, params)).rows;
    case "exec":
      await (txId ? transactions.get(txId).tx : db).exec(sql);
      return undefined;
    case "begin":
      return new Promise((begun, failed) => {
        // The callback runs after transaction() has returned, so `done` is set by the time it is stored.
        const done = db
          .transaction(
            (tx) =>
              new Promise((commit, rollback) => {
                transactions.set(txId, { tx, commit, rollback, done });
                begun(undefined);
              }),
          )
          .catch((error) => {
            if (error !== ROLLBACK) throw error;
          })
          .finally(() => transactions.delete(txId));
        // A transaction that fails to begin answers the begin; later failures answer the commit.
        done.catch(failed);
      });
    case "commit":
    case "rollback": {
      const entry = transactions.get(txId);
      if (op === "commit") entry.commit(undefined);
      else entry.rollback(ROLLBACK);
      await entry.done;
      return undefined;
    }
    case "close":
      await db.close();
      return undefined;
    default:
      throw new Error(`unknown database operation ${op}`);
  }
}

parentPort.on("message", (request) => {
  handle(request).then(
    (result) => parentPort.postMessage({ id: request.id, result }),
    (error) => parentPort.postMessage({ id: request.id, error: describe(error) }),
  );
});
