import type { SponsorshipSetup } from "./setup";

/**
 * Keeps each paymaster's setup in memory for a short time, so that the sponsorship hot path reads no database. A write
 * through this process's management API drops that paymaster's entry at once (`invalidate`); another instance on the
 * same PostgreSQL sees a change within `ttlMs`. When an entry expires and `currentVersion` is given, the cache first
 * asks for the paymaster's setup version (one small query) and keeps the setup it has if that is unchanged: a setup of
 * 10,000 contracts costs no more to keep than one of a single contract. Concurrent misses for one apiKey share one
 * load, and unknown apiKeys are remembered too.
 */
export class SetupCache {
  readonly #entries = new Map<
    string,
    { expiresAt: number; setup: Promise<SponsorshipSetup | undefined>; accountId?: string }
  >();

  constructor(
    private readonly load: (apiKey: string) => Promise<SponsorshipSetup | undefined>,
    private readonly ttlMs = 1000,
    private readonly maxEntries = 10_000,
    /** The paymaster's setup version now (undefined for an unknown apiKey), compared with `SponsorshipSetup.version`. */
    private readonly currentVersion?: (apiKey: string) => Promise<string | undefined>,
  ) {}

  /** The paymaster's setup; `nowMs`, the service's clock, tells whether the one kept is past its TTL. */
  get(apiKey: string, nowMs: number): Promise<SponsorshipSetup | undefined> {
    const cached = this.#entries.get(apiKey);
    if (cached && cached.expiresAt > nowMs) return cached.setup;
    if (this.#entries.size >= this.maxEntries) this.#entries.clear();
    const setup = cached ? this.#reloadIfChanged(apiKey, cached.setup) : this.load(apiKey);
    const entry: { expiresAt: number; setup: Promise<SponsorshipSetup | undefined>; accountId?: string } = {
      expiresAt: nowMs + this.ttlMs,
      setup,
    };
    this.#entries.set(apiKey, entry);
    setup.then(
      (loaded) => {
        entry.accountId = loaded?.accountId;
      },
      () => {},
    );
    // A failed load is not remembered: the next request tries again.
    setup.catch(() => this.#entries.delete(apiKey));
    return setup;
  }

  /** Forgets one paymaster's setup: its next sponsorship loads the setup again. Others stay cached. */
  invalidate(apiKey: string): void {
    this.#entries.delete(apiKey);
  }

  /**
   * Forgets every setup of one account, and every load still under way (whose account is not known yet): the
   * database said that account's credentials changed (an apiKey rotated), which must apply before the TTL ends.
   */
  forgetAccount(accountId: string): void {
    for (const [apiKey, entry] of this.#entries) {
      if (entry.accountId === undefined || entry.accountId === accountId) this.#entries.delete(apiKey);
    }
  }

  async #reloadIfChanged(
    apiKey: string,
    previous: Promise<SponsorshipSetup | undefined>,
  ): Promise<SponsorshipSetup | undefined> {
    if (!this.currentVersion) return this.load(apiKey);
    const [setup, version] = await Promise.all([previous, this.currentVersion(apiKey)]);
    // A setup without a version (built by hand) is never taken for unchanged.
    const unchanged = setup ? setup.version !== undefined && setup.version === version : version === undefined;
    return unchanged ? setup : this.load(apiKey);
  }
}
