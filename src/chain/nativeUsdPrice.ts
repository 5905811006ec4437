// The native token's dollar price of a chain, for USD spending limits and cost caps (chains file, nativeUsdPrice):
// a fixed rate as configured, or a Chainlink-style feed read through the chain's RPC. The feed's round is kept for a
// few seconds, so that a busy service asks the node once per few seconds, not once per request; the age of the
// answer is checked at every use against the service clock, so a kept round never makes a stale price usable.
import type { Address, PublicClient } from "viem";
import { aggregatorAbi } from "../abi/aggregatorAbi";
import type { NativeUsdPriceConfig } from "../config";
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "./chainClient";
import { describeTransportError } from "./transportError";

/** Dollars per whole native token: `answer` / 10^`decimals` (a Chainlink feed's answer and decimals, or a fixed rate). */
export interface NativeUsdPrice {
  answer: bigint;
  decimals: number;
}

/** A positive decimal text ("1234.56", "3000") as a price; undefined when it is not one. */
export function parsePriceText(text: string): NativeUsdPrice | undefined {
  const match = /^(\d{1,30})(?:\.(\d{1,30}))?$/.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? "";
  const answer = BigInt((match[1] as string) + fraction);
  return answer > 0n ? { answer, decimals: fraction.length } : undefined;
}

/** The native token's dollar price at one instant, or why there is none to use (then a USD rule refuses). */
export type PriceReading = { ok: true; price: NativeUsdPrice } | { ok: false; reason: string };

/** Where a chain's native token price comes from (below): a fixed rate or a price feed. */
export interface NativeUsdPriceSource {
  /** The price usable at `nowMs` (the service clock); a feed's answer older than its maximum age is no price. */
  read(nowMs: number): Promise<PriceReading>;
}

/** How long a round read from the feed is reused. */
export const ROUND_TTL_MS = 5_000;
/** How long a failed read is reused: short, so that a node that comes back is asked again soon. */
const FAILURE_TTL_MS = 1_000;

export function nativeUsdPriceSource(
  config: NativeUsdPriceConfig,
  chain: { chainId: number; rpcUrl?: string },
): NativeUsdPriceSource {
  if ("fixed" in config) {
    const price = parsePriceText(config.fixed);
    const reading: PriceReading = price
      ? { ok: true, price }
      : { ok: false, reason: `The native token price of chain ${chain.chainId} is not a positive number` };
    return { read: async () => reading };
  }
  return new FeedPrice(config.aggregator as Address, config.maxAgeSeconds, chain.chainId, chainClient(chain));
}

type Round = { ok: true; answer: bigint; updatedAt: bigint; decimals: number } | { ok: false; reason: string };

class FeedPrice implements NativeUsdPriceSource {
  #kept: { atMs: number; ttlMs: number; round: Promise<Round> } | undefined;
  #decimals: number | undefined;

  constructor(
    private readonly feed: Address,
    private readonly maxAgeSeconds: number,
    private readonly chainId: number,
    private readonly client: PublicClient | undefined,
  ) {}

  async read(nowMs: number): Promise<PriceReading> {
    const kept = this.#kept;
    // Requests that started a moment before the one that read may come after it: only a clock that went back by more
    // than the time kept (a test's, or a corrected host clock) reads again early.
    if (!kept || nowMs - kept.atMs >= kept.ttlMs || kept.atMs - nowMs >= kept.ttlMs) {
      const round = this.#readRound();
      const entry = { atMs: nowMs, ttlMs: ROUND_TTL_MS, round };
      this.#kept = entry;
      round.then((r) => {
        if (!r.ok) entry.ttlMs = FAILURE_TTL_MS;
      });
    }
    const round = await (this.#kept as { round: Promise<Round> }).round;
    if (!round.ok) return round;
    const where = `the native token price feed ${this.feed} of chain ${this.chainId}`;
    if (round.answer <= 0n)
      return { ok: false, reason: `No usable native token price: ${where} answers ${round.answer}` };
    if (round.updatedAt === 0n) {
      return { ok: false, reason: `No usable native token price: the latest round of ${where} is not complete` };
    }
    const ageSeconds = BigInt(Math.floor(nowMs / 1000)) - round.updatedAt;
    if (ageSeconds > BigInt(this.maxAgeSeconds)) {
      return {
        ok: false,
        reason:
          `The native token price is stale: ${where} was last updated ${ageSeconds} s ago, more than the ` +
          `${this.maxAgeSeconds} s allowed (nativeUsdPrice.maxAgeSeconds)`,
      };
    }
    const price: NativeUsdPrice = { answer: round.answer, decimals: round.decimals };
    return { ok: true, price };
  }

  async #readRound(): Promise<Round> {
    const where = `the native token price feed ${this.feed} of chain ${this.chainId}`;
    if (!this.client) return { ok: false, reason: `No usable native token price: chain ${this.chainId} has no RPC` };
    try {
      const [round, decimals] = await Promise.all([
        this.client.readContract({ address: this.feed, abi: aggregatorAbi, functionName: "latestRoundData" }),
        this.#decimals ??
          this.client.readContract({ address: this.feed, abi: aggregatorAbi, functionName: "decimals" }),
      ]);
      this.#decimals = decimals;
      return { ok: true, answer: round[1], updatedAt: round[3], decimals };
    } catch (error) {
      return {
        ok: false,
        reason: `No usable native token price: reading ${where} failed (${describeTransportError(error, CHAIN_RPC_TIMEOUT_MS)})`,
      };
    }
  }
}
