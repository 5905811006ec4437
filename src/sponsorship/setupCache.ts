import type { SponsorshipSetup } from "./setup";

/**
 * Keeps each paymaster's setup in memory for a short time, so that the sponsorship hot path reads no database. A write
 * through this process's management API drops that paymaster's entry at once (`invalidate`); another instance on the same PostgreSQL sees a change
 * within `ttlMs`. Concurrent misses for one apiKey share one load, and unknown apiKeys are remembered too.
 */
export class SetupCache {
  readonly #entries = new Map<string, { expiresAt: number; setup: Promise<SponsorshipSetup | undefined> }>();

  constructor(
    private readonly load: (apiKey: string) => Promise<SponsorshipSetup | undefined>,
    private readonly ttlMs = 1000,
    private readonly maxEntries = 10_000,
  ) {}

  get(apiKey: string, nowMs = Date.now()): Promise<SponsorshipSetup | undefined> {
    const cached = this.#entries.get(apiKey);
    if (cached && cached.expiresAt > nowMs) return cached.setup;
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    const setup = this.load(apiKey);
    this.#entries.set(apiKey, { expiresAt: nowMs + this.ttlMs, setup });
    // A failed load is not remembered: the next request tries again.
    setup.catch(() => this.#entries.delete(apiKey));
    return setup;
  }

  /** Forgets one paymaster's setup: its next sponsorship loads the setup again. Others stay cached. */
  invalidate(apiKey: string): void {
    this.#entries.delete(apiKey);
  }
}
