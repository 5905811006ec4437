import type { Address, PublicClient } from "viem";
import { chainClient } from "../chain/chainClient";
import { CLOCK_SKEW_SECONDS } from "../chain/clockSkew";
import { describeChainError, EXPIRY_MARGIN_SECONDS } from "../chain/paymasterDeposit";
import { type SponsoringChain, sponsoringChains } from "../chain/sponsoringChains";
import type { AppContext } from "../context";
import type { Metrics } from "../metrics/metrics";
import type { Database } from "../storage/database";
import {
  type ChainCursor,
  openCursor,
  type ReleaseOutcome,
  readCursor,
  releaseExpired,
  settleRange,
} from "../storage/settlement";
import {
  REFUND_FAILED,
  readOperationLogs,
  type TokenChargeFailure,
  tokenPaymastersOf,
  type WatchedEntryPoint,
  watchedEntryPoints,
} from "./operationLogs";

const SETTLEMENT_INTERVAL_MS = 2_000;
/** Blocks per eth_getLogs call: within what public providers accept. */
const SETTLEMENT_BLOCK_RANGE = 2_000;

export interface SettlementLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface SettlementOptions {
  /** Pause between passes. */
  intervalMs?: number;
  /** False: no timer; passes run only through `settleOnce()` (tests). */
  poll?: boolean;
  maxBlockRange?: number;
  log?: SettlementLog;
  /** The settlement lag gauge and the token paymasters' reverted postOps are counted here. */
  metrics?: Metrics;
}

/** What one pass did on one chain. */
export interface SettlementPass {
  chainId: number;
  /** The blocks read in this pass, if any. */
  fromBlock?: bigint;
  toBlock?: bigint;
  settled: number;
  superseded: number;
  reservations: number;
  /**
   * Operations of our v0.7-on token paymasters whose postOp reverted (PostOpRevertReason), logged and counted: the
   * approve-in-batch one's failed charges and the up-front one's failed refunds.
   */
  tokenChargeFailures: number;
  /** Undefined when the pass did not reach the chain's head, so nothing expired could be released safely. */
  released?: ReleaseOutcome;
}

type WatchedChain = SponsoringChain & { rpcUrl: string };

/**
 * Settlement of one chain. Each pass reads the UserOperationEvent logs of every EntryPoint the chain serves for our
 * paymasters on it (operationLogs.ts) from the block after the cursor to the head, in ranges, and settles each range
 * together with the cursor (storage/settlement.ts), so a restart resumes from the last block processed. Once at the
 * head it releases what expired unmined: only then is it known that no block up to that moment ran those operations.
 */
class ChainSettlement {
  readonly #db: Database;
  readonly #client: PublicClient;
  readonly #now: () => number;
  readonly #log?: SettlementLog;
  readonly #metrics?: Metrics;
  readonly #entryPoints: readonly WatchedEntryPoint[];
  /** Our token paymasters, whose charges the sponsorship events report. */
  readonly #tokenPaymasters: readonly Address[];
  #range: number;
  #genesis?: string;
  #queue: Promise<unknown> = Promise.resolve();
  #halted = false;

  constructor(
    db: Database,
    readonly chain: WatchedChain,
    client: PublicClient,
    options: { now: () => number; maxBlockRange?: number; log?: SettlementLog; metrics?: Metrics },
  ) {
    this.#db = db;
    this.#client = client;
    this.#now = options.now;
    this.#range = options.maxBlockRange ?? SETTLEMENT_BLOCK_RANGE;
    this.#log = options.log;
    this.#metrics = options.metrics;
    this.#entryPoints = watchedEntryPoints(chain);
    this.#tokenPaymasters = tokenPaymastersOf(chain);
  }

  /** The EntryPoint versions read, and our paymasters on each. */
  get entryPoints(): readonly WatchedEntryPoint[] {
    return this.#entryPoints;
  }

  /** Blocks between the head and what settlement has read: what an alert on a stuck settlement watches. */
  #reportLag(head: bigint, lastBlock: bigint): void {
    const lag = head > lastBlock ? Number(head - lastBlock) : 0;
    this.#metrics?.settlementLagBlocks.set({ chain_id: String(this.chain.chainId) }, lag);
  }

  /** Ends the pass under way after its current range (each range is committed whole or not at all). */
  halt(): void {
    this.#halted = true;
  }

  /** One pass; passes of one chain never overlap (a call during a pass runs after it). */
  settleOnce(): Promise<SettlementPass> {
    const pass = this.#queue.then(() => this.#pass());
    this.#queue = pass.catch(() => {});
    return pass;
  }

  async #pass(): Promise<SettlementPass> {
    const { chainId } = this.chain;
    const result: SettlementPass = { chainId, settled: 0, superseded: 0, reservations: 0, tokenChargeFailures: 0 };
    // Read before the head: whatever expired before this moment and was not in a block up to the head never will be.
    const startedAtMs = this.#now();
    const head = await this.#client.getBlockNumber({ cacheTime: 0 });
    let cursor = await this.#cursor(head);
    this.#reportLag(head, cursor.lastBlock);
    while (cursor.lastBlock < head) {
      if (this.#halted) return result;
      const fromBlock = cursor.lastBlock + 1n;
      const toBlock = minBig(head, fromBlock + BigInt(this.#range) - 1n);
      const { events, tokenChargeFailures } = await this.#logs(fromBlock, toBlock);
      const outcome = await settleRange(this.#db, {
        chainId,
        fromBlock,
        toBlock,
        events,
        atMs: this.#now(),
        validAfterSkewSeconds: CLOCK_SKEW_SECONDS,
      });
      if (!outcome.applied) {
        // Another instance moved the cursor meanwhile: carry on from where it is.
        cursor = (await readCursor(this.#db, chainId)) ?? cursor;
        continue;
      }
      result.fromBlock ??= fromBlock;
      result.toBlock = toBlock;
      result.settled += outcome.settled;
      result.superseded += outcome.superseded;
      result.reservations += outcome.reservations;
      // Reported by the instance whose range was applied, so once per failure.
      for (const failure of tokenChargeFailures) this.#reportTokenChargeFailure(failure);
      result.tokenChargeFailures += tokenChargeFailures.length;
      cursor = { ...cursor, lastBlock: toBlock };
      this.#reportLag(head, toBlock);
    }
    result.released = await releaseExpired(this.#db, {
      chainId,
      cutoff: Math.floor(startedAtMs / 1000) - EXPIRY_MARGIN_SECONDS,
      atMs: this.#now(),
    });
    const released = result.released.sponsorships + result.released.reservations;
    if (result.settled + result.superseded + released > 0) {
      this.#log?.info(
        `settlement on chain ${chainId}: blocks ${result.fromBlock ?? "-"}..${result.toBlock ?? "-"}, ` +
          `${result.settled} settled, ${result.superseded} superseded, ` +
          `${result.released.sponsorships} expired sponsorships and ${result.released.reservations} limit reservations released`,
      );
    }
    return result;
  }

  /**
   * The stored cursor; the first pass (and any pass that finds the head behind it) checks block 0's hash, so a chain
   * restarted under the same id (a local node) is read from its start again instead of from the old chain's height.
   */
  async #cursor(head: bigint): Promise<ChainCursor> {
    const stored = this.#genesis === undefined ? undefined : await readCursor(this.#db, this.chain.chainId);
    if (stored && stored.genesisHash === this.#genesis && head >= stored.lastBlock) return stored;
    const genesis = (await this.#client.getBlock({ blockNumber: 0n })).hash;
    this.#genesis = genesis;
    // A first start reads back one range: sponsorships before it are released on expiry in any case.
    const startAfter = head >= BigInt(this.#range) ? head - BigInt(this.#range) : -1n;
    const { cursor, reset } = await openCursor(this.#db, this.chain.chainId, genesis, startAfter);
    if (reset) {
      this.#log?.warn(
        `settlement on chain ${this.chain.chainId}: block 0 differs from the one the cursor was written for ` +
          `(a new chain under the same id); reading from block ${startAfter + 1n}`,
      );
    }
    return cursor;
  }

  async #logs(fromBlock: bigint, toBlock: bigint) {
    return readOperationLogs(this.#client, this.#entryPoints, fromBlock, toBlock, this.#tokenPaymasters).catch(
      (error: unknown) => {
        // Providers cap the range or the result size of eth_getLogs: the next pass asks for less.
        this.#range = Math.max(1, Math.floor(this.#range / 2));
        throw error;
      },
    );
  }

  /**
   * A postOp of our token paymaster reverted (docs/operations.md, 'Failed token charges'). The approve-in-batch one's:
   * the sender's tokens did not pay, the EntryPoint took the gas from our paymaster's deposit, and a sender that does it
   * again and again drains that deposit. The up-front one's: its refund failed, so it kept the whole prefund and the
   * sender paid its signed maximum; the deposit loses nothing, the sender was overcharged.
   */
  #reportTokenChargeFailure(failure: TokenChargeFailure): void {
    const { chainId } = this.chain;
    const { failed, version } = failure;
    this.#metrics?.tokenChargeFailures.inc({ chain_id: String(chainId), version, failed });
    const operation = `operation ${failure.userOpHash} of sender ${failure.sender} (nonce ${failure.nonce})`;
    const where = `on EntryPoint v${version} in transaction ${failure.txHash}`;
    this.#log?.warn(
      failed === "charge"
        ? `settlement on chain ${chainId}: the token charge of ${operation} failed ${where}: ${failure.reason}; ` +
            "the token paymaster's deposit paid its gas"
        : `settlement on chain ${chainId}: ${operation} ${where}: ${REFUND_FAILED}: ${failure.reason}; ` +
            "the up-front token paymaster charged the sender its signed maximum and refunded nothing",
    );
  }
}

export interface Settlement {
  readonly chains: readonly ChainSettlement[];
  /** One pass on every watched chain, now (tests; the timer keeps running if it was started). */
  settleOnce(): Promise<SettlementPass[]>;
  /** Ends the timers and waits for a pass under way. */
  stop(): Promise<void>;
}

/**
 * Starts settlement on every chain with an RPC and at least one of our paymasters; chains without an RPC sign without it
 * (their spending-limit reservations keep their worst case and are never released, since nothing tells whether they
 * ran).
 */
export function startSettlement(
  ctx: Pick<AppContext, "db" | "chains" | "now">,
  options: SettlementOptions = {},
): Settlement {
  const intervalMs = options.intervalMs ?? SETTLEMENT_INTERVAL_MS;
  const watched: ChainSettlement[] = [];
  for (const chain of sponsoringChains(ctx.chains).values()) {
    const client = chainClient(chain);
    if (!client || !chain.rpcUrl || watchedEntryPoints(chain).length === 0) continue;
    watched.push(
      new ChainSettlement(ctx.db, chain as WatchedChain, client, {
        now: ctx.now,
        maxBlockRange: options.maxBlockRange,
        log: options.log,
        metrics: options.metrics,
      }),
    );
  }
  let stopped = false;
  const timers = new Set<NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();

  const loop = (settlement: ChainSettlement) => {
    let lastWarning = { message: "", atMs: 0 };
    const tick = async () => {
      if (stopped) return;
      const pass = settlement.settleOnce().then(
        () => {
          if (lastWarning.message) options.log?.info(`settlement on chain ${settlement.chain.chainId} works again`);
          lastWarning = { message: "", atMs: 0 };
        },
        (error: unknown) => {
          // The RPC URL is left out (it often carries an API key); a failure that repeats is logged once a minute.
          const message = `settlement on chain ${settlement.chain.chainId} failed: ${describeChainError(error, settlement.chain)}`;
          const now = ctx.now();
          if (message !== lastWarning.message || now - lastWarning.atMs >= 60_000) {
            options.log?.warn(message);
            lastWarning = { message, atMs: now };
          }
        },
      );
      running.add(pass);
      await pass;
      running.delete(pass);
      if (stopped) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        void tick();
      }, intervalMs);
      timer.unref();
      timers.add(timer);
    };
    void tick();
  };

  if (options.poll !== false) {
    for (const settlement of watched) loop(settlement);
    if (watched.length > 0) {
      options.log?.info(`settlement watches chains ${watched.map((s) => s.chain.chainId).join(", ")}`);
    }
  }

  return {
    chains: watched,
    settleOnce: () => Promise.all(watched.map((settlement) => settlement.settleOnce())),
    async stop() {
      stopped = true;
      for (const settlement of watched) settlement.halt();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await Promise.all(running);
    },
  };
}

const minBig = (a: bigint, b: bigint) => (a < b ? a : b);
