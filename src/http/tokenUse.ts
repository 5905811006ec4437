import { noteTokenUse } from "../storage/accountTokens";
import type { Queryable } from "../storage/database";

/** How stale a token's "last used" may be: noting every request would turn each read into a write. */
const NOTE_EVERY_MS = 60_000;
/** Tokens remembered; beyond it the memory starts again (a token then gets one extra note). */
const MAX_TOKENS = 10_000;

/**
 * Notes when tokens are used, at most once a minute per token and instance, so that the token list can show a last use
 * without a database write per request.
 */
export class TokenUse {
  readonly #notedAt = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly now: () => number,
  ) {}

  async note(tokenId: string): Promise<void> {
    const nowMs = this.now();
    const noted = this.#notedAt.get(tokenId);
    if (noted !== undefined && nowMs - noted < NOTE_EVERY_MS && nowMs >= noted) return;
    if (this.#notedAt.size >= MAX_TOKENS) this.#notedAt.clear();
    this.#notedAt.set(tokenId, nowMs);
    await noteTokenUse(this.db, tokenId, nowMs);
  }
}
