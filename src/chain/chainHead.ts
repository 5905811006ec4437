// The chain's latest block number and its recent pace, read through the chain's node: where a validity window in block
// numbers starts (src/sponsorship/blockWindow.ts) and how long the ledger holds it. The head is read afresh for each
// signature (concurrent reads share one call), since a window must start where the chain is; the pace changes slowly
// and is measured over the last PACE_SPAN blocks at most once per PACE_TTL_MS.
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "./chainClient";
import type { SponsoringChain } from "./sponsoringChains";
import { describeTransportError } from "./transportError";

/** The head block's number and the seconds a block took lately, or why they could not be read. */
export type HeadReading = { ok: true; number: bigint; secondsPerBlock: number } | { ok: false; error: string };

/** Where a chain's head comes from; one per chain and app. */
export interface ChainHeadSource {
  /** The head now; `nowMs`, the service's clock, tells whether the pace measured last is still fresh. */
  read(nowMs: number): Promise<HeadReading>;
}

/** A block's number and timestamp (unix seconds), as the node gives them. */
export interface BlockStamp {
  number: bigint;
  timestamp: bigint;
}

const PACE_SPAN = 1_000n;
const PACE_TTL_MS = 10 * 60_000;

export interface ChainHeadsOptions {
  /** Reads a block: the latest one without a number. By default eth_getBlockByNumber through the chain's RPC. */
  getBlock?: (number?: bigint) => Promise<BlockStamp>;
}

export class ChainHeads implements ChainHeadSource {
  readonly #getBlock: (number?: bigint) => Promise<BlockStamp>;
  #pending: Promise<HeadReading> | undefined;
  #pace: { at: number; secondsPerBlock: number } | undefined;

  constructor(chain: Pick<SponsoringChain, "rpcUrl">, options: ChainHeadsOptions = {}) {
    this.#getBlock = options.getBlock ?? ((number) => blockThroughRpc(chain, number));
  }

  read(nowMs: number): Promise<HeadReading> {
    this.#pending ??= this.#read(nowMs).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #read(nowMs: number): Promise<HeadReading> {
    try {
      const head = await this.#getBlock();
      return { ok: true, number: head.number, secondsPerBlock: await this.#secondsPerBlock(head, nowMs) };
    } catch (error) {
      return { ok: false, error: describeTransportError(error, CHAIN_RPC_TIMEOUT_MS) };
    }
  }

  async #secondsPerBlock(head: BlockStamp, now: number): Promise<number> {
    if (this.#pace && now - this.#pace.at < PACE_TTL_MS) return this.#pace.secondsPerBlock;
    const span = head.number < PACE_SPAN ? head.number : PACE_SPAN;
    const earlier = span === 0n ? head : await this.#getBlock(head.number - span);
    const secondsPerBlock = span === 0n ? 0 : Number(head.timestamp - earlier.timestamp) / Number(span);
    this.#pace = { at: now, secondsPerBlock: Math.max(0, secondsPerBlock) };
    return this.#pace.secondsPerBlock;
  }
}

/** The chain's head source: the one sponsoringChains made with its RPC, or an uncached one; undefined without an RPC. */
export function chainHeadOf(chain: Pick<SponsoringChain, "rpcUrl" | "heads">): ChainHeadSource | undefined {
  return chain.heads ?? (chain.rpcUrl ? new ChainHeads(chain) : undefined);
}

async function blockThroughRpc(chain: Pick<SponsoringChain, "rpcUrl">, number?: bigint): Promise<BlockStamp> {
  const client = chainClient(chain);
  if (!client) throw new Error("no RPC configured");
  const block = await client.getBlock(number === undefined ? { blockTag: "latest" } : { blockNumber: number });
  if (block.number === null) throw new Error("the node gave a pending block as the latest");
  return { number: block.number, timestamp: block.timestamp };
}
