// The quota counters on their own: concurrent hits of one window get distinct counts 1..n (batched into one statement
// on PostgreSQL, in memory on PGlite), windows and keys are counted apart, ended windows start again, and the memory
// counter stays bounded under many clients.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import type { Database } from "../../src/storage/database";
import { MemoryQuotaCounter, type QuotaCounter, quotaCounterOf } from "../../src/storage/quotaCounter";
import { openTestDatabase } from "../helpers/database";

let db: Database;
let counter: QuotaCounter;
before(async () => {
  db = await openTestDatabase();
  counter = quotaCounterOf(db);
});
after(() => db.close());

const hit = (policyId: string, scopeKey: string, windowStartMs = 0, windowEndMs = 60_000) => ({
  policyId,
  windowStartMs,
  windowEndMs,
  scopeKey,
});

test("concurrent hits of one window get the counts 1 to n, each once; other keys and policies count apart", async () => {
  const policy = randomUUID();
  const other = randomUUID();
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, i) =>
      counter.count([hit(policy, i % 4 === 0 ? "10.0.0.2" : "10.0.0.1"), hit(other, "10.0.0.1")], 1_000),
    ),
  );
  const first = answers.filter((_, i) => i % 4 !== 0).map(([count]) => count);
  assert.deepEqual(
    [...first].sort((a, b) => (a ?? 0) - (b ?? 0)),
    Array.from({ length: 30 }, (_, i) => i + 1),
  );
  const second = answers.filter((_, i) => i % 4 === 0).map(([count]) => count);
  assert.deepEqual(
    [...second].sort((a, b) => (a ?? 0) - (b ?? 0)),
    Array.from({ length: 10 }, (_, i) => i + 1),
  );
  const otherPolicy = answers.map(([, count]) => count).sort((a, b) => (a ?? 0) - (b ?? 0));
  assert.deepEqual(
    otherPolicy,
    Array.from({ length: 40 }, (_, i) => i + 1),
  );
});

test("the next window starts again from 1", async () => {
  const policy = randomUUID();
  assert.deepEqual(await counter.count([hit(policy, "k")], 1_000), [1]);
  assert.deepEqual(await counter.count([hit(policy, "k")], 2_000), [2]);
  assert.deepEqual(await counter.count([hit(policy, "k", 60_000, 120_000)], 61_000), [1]);
});

test("in memory, past its bound the ended windows go first, then the oldest; every count stays exact for the rest", async () => {
  const memory = new MemoryQuotaCounter(10);
  for (let i = 0; i < 10; i++) await memory.count([hit("p", `ended-${i}`, 0, 1_000)], 500);
  for (let i = 0; i < 10; i++) await memory.count([hit("p", `live-${i}`, 1_000, 61_000)], 2_000);
  // The ten ended windows made room for the ten live ones, which all still count.
  assert.deepEqual(await memory.count([hit("p", "live-9", 1_000, 61_000)], 2_000), [2]);
  assert.deepEqual(await memory.count([hit("p", "live-0", 1_000, 61_000)], 2_000), [2]);
  // Full of live windows: the oldest tenth (one) is forgotten to make room for a new client.
  assert.deepEqual(await memory.count([hit("p", "new", 1_000, 61_000)], 2_000), [1]);
  assert.deepEqual(await memory.count([hit("p", "live-0", 1_000, 61_000)], 2_000), [1]);
});
