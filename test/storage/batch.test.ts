// Group commit: concurrent submissions share a batch, each caller gets its own result, and no more than maxInFlight
// batches run at once.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Batcher } from "../../src/storage/batch";

/** A run that takes `ms` and records every batch and how many ran at once. */
function recordingRun(ms: number) {
  const batches: number[][] = [];
  let running = 0;
  let most = 0;
  const run = async (items: number[]) => {
    batches.push(items);
    running++;
    most = Math.max(most, running);
    await new Promise((resolve) => setTimeout(resolve, ms));
    running--;
    if (items.includes(-1)) throw new Error("batch failed");
    return items.map((n) => n * 10);
  };
  return { run, batches, most: () => most };
}

test("submissions of one turn share a batch; each caller gets its own result", async () => {
  const recorded = recordingRun(5);
  const batcher = new Batcher(recorded.run);
  const results = await Promise.all([1, 2, 3, 4].map((n) => batcher.submit(n)));
  assert.deepEqual(results, [10, 20, 30, 40]);
  assert.deepEqual(recorded.batches, [[1, 2, 3, 4]]);
});

test("what arrives while batches run starts another, never more than maxInFlight at once", async () => {
  const recorded = recordingRun(20);
  const batcher = new Batcher(recorded.run, 500, 2);
  const waits: Promise<number>[] = [];
  for (let wave = 0; wave < 6; wave++) {
    for (let i = 0; i < 3; i++) waits.push(batcher.submit(wave * 10 + i));
    await new Promise((resolve) => setTimeout(resolve, 4));
  }
  const results = await Promise.all(waits);
  assert.deepEqual(
    results,
    waits.map((_, k) => (Math.floor(k / 3) * 10 + (k % 3)) * 10),
  );
  assert.equal(recorded.most(), 2);
  assert.equal(recorded.batches.flat().length, 18, "every item ran once");
  assert.ok(recorded.batches.length < 18, "items were grouped");
});

test("maxBatch splits a large group, and a failed batch rejects its own callers only", async () => {
  const recorded = recordingRun(1);
  const batcher = new Batcher(recorded.run, 2, 1);
  const outcomes = await Promise.allSettled([1, 2, -1, 3, 4].map((n) => batcher.submit(n)));
  assert.deepEqual(recorded.batches, [[1, 2], [-1, 3], [4]]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ["fulfilled", "fulfilled", "rejected", "rejected", "fulfilled"],
  );
});
