import { Batcher, type BatchObserver } from "./batch";
import type { Database } from "./database";

/** One request counted against one quota: the rule, its current window and whose requests it counts together. */
export interface QuotaHit {
  policyId: string;
  windowStartMs: number;
  windowEndMs: number;
  /** The client address, the sender or the origin, as the rule's scope says. */
  scopeKey: string;
}

/**
 * Counts requests against quotas. `count` adds one to each hit's window and answers, per hit, how many requests that
 * window has counted with this one included: the caller compares it with the limit. Requests over the limit are
 * counted too; their window refuses until it ends either way.
 */
export interface QuotaCounter {
  count(hits: QuotaHit[], nowMs: number): Promise<number[]>;
}

/** Windows remembered at most in memory; beyond it the ended ones go, then the oldest (memory stays bounded). */
const MAX_MEMORY_WINDOWS = 100_000;

const keyOf = (hit: QuotaHit) => `${hit.policyId}\u0000${hit.windowStartMs}\u0000${hit.scopeKey}`;

/**
 * The embedded database's counter: PGlite has one process, so the counts live in it, with no statement at all. A
 * restart forgets them (at most one window of each quota starts again). Under a flood of more distinct clients than
 * MAX_MEMORY_WINDOWS, the oldest windows are forgotten first: each forgotten client may send up to its limit again.
 */
export class MemoryQuotaCounter implements QuotaCounter {
  readonly #windows = new Map<string, { hits: number; endsAt: number }>();

  constructor(private readonly maxWindows = MAX_MEMORY_WINDOWS) {}

  async count(hits: QuotaHit[], nowMs: number): Promise<number[]> {
    return hits.map((hit) => {
      const key = keyOf(hit);
      const window = this.#windows.get(key);
      if (window && window.endsAt > nowMs) return ++window.hits;
      this.#windows.delete(key);
      if (this.#windows.size >= this.maxWindows) this.#makeRoom(nowMs);
      this.#windows.set(key, { hits: 1, endsAt: hit.windowEndMs });
      return 1;
    });
  }

  /** Drops every ended window; if that frees nothing, the oldest tenth (a Map iterates in insertion order). */
  #makeRoom(nowMs: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= nowMs) this.#windows.delete(key);
    if (this.#windows.size < this.maxWindows) return;
    let drop = Math.ceil(this.maxWindows / 10);
    for (const key of this.#windows.keys()) {
      if (drop-- <= 0) break;
      this.#windows.delete(key);
    }
  }
}

/**
 * Concurrent requests' hits, one statement a batch: each key's hits added at once (one multi-row upsert cannot touch
 * a row twice), the rows in key order so that two instances' batches lock them in the same order and never deadlock.
 * The row lock serialises instances: each batch gets its own range of counts, so a quota holds across instances.
 */
const UPSERT = `
  INSERT INTO quota_counts (policy_id, window_start_ms, scope_key, expires_ms, hits)
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[]) ORDER BY 1, 2, 3
  ON CONFLICT (policy_id, window_start_ms, scope_key) DO UPDATE SET hits = quota_counts.hits + EXCLUDED.hits
  RETURNING policy_id::text AS policy_id, window_start_ms::text AS window_start_ms, scope_key, hits::text AS hits`;

/** How often an instance sweeps the ended windows: the table holds about this long's worth of ended rows at most. */
const SWEEP_EVERY_MS = 60_000;

/** PostgreSQL's counter, shared by every instance on the database (migration 19's table). */
class PostgresQuotaCounter implements QuotaCounter {
  readonly #batcher: Batcher<{ hits: QuotaHit[]; nowMs: number }, number[]>;
  #sweptAtMs = 0;

  constructor(
    private readonly db: Database,
    observe?: BatchObserver,
  ) {
    this.#batcher = new Batcher((requests) => this.#countBatch(requests), undefined, observe);
  }

  count(hits: QuotaHit[], nowMs: number): Promise<number[]> {
    return hits.length === 0 ? Promise.resolve([]) : this.#batcher.submit({ hits, nowMs });
  }

  async #countBatch(requests: { hits: QuotaHit[]; nowMs: number }[]): Promise<number[][]> {
    const perKey = new Map<string, { hit: QuotaHit; added: number }>();
    for (const { hits } of requests) {
      for (const hit of hits) {
        const entry = perKey.get(keyOf(hit));
        if (entry) entry.added += 1;
        else perKey.set(keyOf(hit), { hit, added: 1 });
      }
    }
    const keys = [...perKey.values()];
    const rows = await this.db.query<{ policy_id: string; window_start_ms: string; scope_key: string; hits: string }>(
      UPSERT,
      [
        keys.map((k) => k.hit.policyId),
        keys.map((k) => String(k.hit.windowStartMs)),
        keys.map((k) => k.hit.scopeKey),
        keys.map((k) => String(k.hit.windowEndMs)),
        keys.map((k) => String(k.added)),
      ],
    );
    // The batch's hits of one key take the counts it added, in the order the requests came.
    const next = new Map<string, number>();
    for (const row of rows) {
      const key = keyOf({
        policyId: row.policy_id,
        windowStartMs: Number(row.window_start_ms),
        scopeKey: row.scope_key,
        windowEndMs: 0,
      });
      next.set(key, Number(row.hits) - (perKey.get(key)?.added ?? 0) + 1);
    }
    const counts = requests.map(({ hits }) =>
      hits.map((hit) => {
        const key = keyOf(hit);
        const value = next.get(key) ?? 1;
        next.set(key, value + 1);
        return value;
      }),
    );
    await this.#sweep(Math.max(...requests.map((r) => r.nowMs)));
    return counts;
  }

  async #sweep(nowMs: number): Promise<void> {
    if (nowMs - this.#sweptAtMs < SWEEP_EVERY_MS) return;
    this.#sweptAtMs = nowMs;
    await this.db.query("DELETE FROM quota_counts WHERE expires_ms <= $1", [String(nowMs)]);
  }
}

/** In the process on PGlite (one process owns it), in the database on PostgreSQL (shared by every instance). */
export function quotaCounterOf(db: Database, observe?: BatchObserver): QuotaCounter {
  return db.kind === "pglite" ? new MemoryQuotaCounter() : new PostgresQuotaCounter(db, observe);
}
