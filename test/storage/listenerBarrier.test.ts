import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Database } from "../../src/storage/database";
import type { ChannelHandlers } from "../../src/storage/pgListener";
import { openTwoInstanceDatabases } from "../helpers/database";

/**
 * A listener's barrier: once it resolves, every notification committed before it was asked for has been handed to the
 * listener, in order, on PGlite and on PostgreSQL (where they arrive on a connection of their own, after the commit).
 * The barrier's own notification reaches no handler, neither its listener's nor another's on the same channel.
 */
const CHANNEL = "listener_barrier_test";

let listening: Database;
let sending: Database;
let close: () => Promise<void>;
before(async () => {
  ({ first: listening, second: sending, close } = await openTwoInstanceDatabases());
});
after(() => close());

/** Handlers that keep what they were told. */
function recorded(): ChannelHandlers & { payloads: string[] } {
  const payloads: string[] = [];
  return { payloads, notify: (payload) => payloads.push(payload), up: () => {}, down: () => {} };
}

/** A change's notification as the triggers send it: the schema of the tables, then the payload. */
const notify = (db: Database, payload: string) =>
  db.query("SELECT pg_notify($1, current_schema() || ':' || $2)", [CHANNEL, payload]);

test("every notification committed before the barrier has been handed over when it resolves, in order", async () => {
  const handlers = recorded();
  const listener = await listening.listen(CHANNEL, handlers);
  try {
    const sent = Array.from({ length: 20 }, (_, i) => `change-${i}`);
    for (const payload of sent) await notify(sending, payload);
    await listener.barrier();
    assert.deepEqual(handlers.payloads, sent);
    // Again, with nothing sent in between: it still comes back, and tells nobody.
    await listener.barrier();
    assert.deepEqual(handlers.payloads, sent);
  } finally {
    await listener.close();
  }
});

test("another listener's barrier on the channel reaches no handler of this one", async () => {
  const mine = recorded();
  const theirs = recorded();
  const listener = await listening.listen(CHANNEL, mine);
  const other = await sending.listen(CHANNEL, theirs);
  try {
    await other.barrier();
    await notify(sending, "after");
    await listener.barrier();
    await other.barrier();
    assert.deepEqual(mine.payloads, ["after"], "the other listener's barriers are no change for this one");
    assert.deepEqual(theirs.payloads, ["after"], "nor for their own");
  } finally {
    await listener.close();
    await other.close();
  }
});

test("a closed listener's barrier fails instead of waiting", async () => {
  const listener = await listening.listen(CHANNEL, recorded());
  await listener.close();
  await assert.rejects(listener.barrier());
});
