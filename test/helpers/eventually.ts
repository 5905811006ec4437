import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { inspect } from "node:util";

export interface EventuallyOptions {
  /** How long the condition may take to hold: a bound on the wait, not a speed target (ms). */
  withinMs?: number;
  /** The pause between two reads (ms): it paces the poll, it proves nothing. */
  everyMs?: number;
}

/**
 * Reads `read` until `holds` accepts what it returned, and returns that value; fails after `withinMs` with `what` and
 * the last value read. For what must come to pass (another instance hearing of a change, an alert being delivered):
 * the test goes on as soon as it has, so the bound can be generous. Never for proving that something did not happen:
 * wait for an event that must follow it instead (a queue that is idle, a later event, a notification barrier).
 *
 * `holds` defaults to truthiness, for a `read` that answers the question itself.
 */
export async function eventually<T>(
  what: string,
  read: () => T | Promise<T>,
  holds: (value: T) => boolean = Boolean,
  { withinMs = 20_000, everyMs = 20 }: EventuallyOptions = {},
): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) assert.fail(`${what}: not within ${withinMs} ms; last seen: ${inspect(value)}`);
    await sleep(everyMs);
  }
}
