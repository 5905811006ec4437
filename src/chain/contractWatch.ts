// The service's own check of its contracts on every chain with a node: at start, then every interval, the network
// checks the `contracts status` command prints (src/chain/paymasterChecks.ts) run against each chain and the verdict is
// kept in memory. /readyz reports it per chain, the chains endpoint shows it, and the sponsorship engine refuses an
// operation for a paymaster that fails a check before signing anything, naming the check. A rotation of the signer or
// a change of stake on chain is seen at the next pass, without a restart.
import type { Address, PublicClient } from "viem";
import { isAddressEqual } from "viem";
import type { ChainConfig } from "../config";
import { chainClient } from "./chainClient";
import { checkChain, type EntryPointSite, type NetworkCheck, sitesOfChain } from "./paymasterChecks";
import type { SponsoringChain } from "./sponsoringChains";

/**
 * How often the contracts are read again. A pass costs a handful of reads per paymaster; half a minute keeps a change
 * seen within a minute (the interval plus a pass, each read bounded by the RPC timeout).
 */
export const CONTRACT_CHECK_INTERVAL_MS = 30_000;

export type ChainCheckStatus = "ok" | "failing" | "unknown";

export interface ChainChecks {
  chainId: number;
  /** ok: every check held; failing: one failed; unknown: the node has not answered a whole pass yet. */
  status: ChainCheckStatus;
  /** When the last pass that read the chain ended (ms since the epoch). */
  checkedAt?: number;
  /** That pass's lines, each naming its EntryPoint version, paymaster kind and contract where it has them. */
  lines: readonly NetworkCheck[];
  /** Why the latest pass could not read the chain; the lines above are then older. */
  readError?: string;
}

export interface ContractWatchOptions {
  chains: ReadonlyMap<number, SponsoringChain>;
  /** The service's verifying signer, which must be in every paymaster's signer set. */
  signer: Address;
  intervalMs?: number;
  /** Chains not to check: the development chain the service deploys itself. */
  exclude?: readonly number[];
  /** The service's clock (ms): when each verdict was reached. */
  now: () => number;
  /** The node of a chain; by default the shared client of its rpcUrl. */
  client?: (chain: SponsoringChain) => PublicClient | undefined;
}

interface Watched {
  chain: SponsoringChain;
  /** The chain as the checks read it: the addresses the service signs for, defaults filled in. */
  config: ChainConfig;
  sites: EntryPointSite[];
}

/** Runs the checks of every chain that has an rpcUrl and our contracts, and keeps each chain's latest verdict. */
export class ContractWatch {
  readonly #options: ContractWatchOptions;
  readonly #watched: Watched[] = [];
  readonly #verdicts = new Map<number, ChainChecks>();
  #timer?: NodeJS.Timeout;
  #pass?: Promise<void>;

  constructor(options: ContractWatchOptions) {
    this.#options = options;
    for (const chain of options.chains.values()) {
      if (chain.rpcUrl === undefined || options.exclude?.includes(chain.chainId)) continue;
      const config = checkedConfig(chain);
      const sites = sitesOfChain(config);
      if (sites.length === 0) continue;
      this.#watched.push({ chain, config, sites });
      this.#verdicts.set(chain.chainId, { chainId: chain.chainId, status: "unknown", lines: [] });
    }
  }

  /** The first pass (awaited, so a start reports real verdicts), then one every interval until stop(). */
  async start(): Promise<void> {
    await this.checkNow();
    this.#timer = setInterval(() => void this.checkNow(), this.#options.intervalMs ?? CONTRACT_CHECK_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Waits for the pass under way, if any. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#pass;
  }

  /** One pass over every watched chain; a call during a pass shares it rather than starting a second one. */
  checkNow(): Promise<void> {
    this.#pass ??= Promise.all(this.#watched.map((watched) => this.#checkChain(watched))).then(() => {
      this.#pass = undefined;
    });
    return this.#pass;
  }

  /** The chain's latest verdict; undefined for a chain not checked (no rpcUrl, none of our contracts, excluded). */
  checks(chainId: number): ChainChecks | undefined {
    return this.#verdicts.get(chainId);
  }

  /**
   * Why the service must not sign for `paymaster` on the chain: the first failed check that concerns it (the chain's
   * id, its EntryPoint, or the contract itself), in words for the dApp. A fee token's own failure is reported but
   * refuses nothing here: the other tokens still work, and that token's quote fails on its own. A chain never read
   * (its node did not answer) refuses nothing either: the rules after this read the node too.
   */
  refusal(chainId: number, paymaster: Address): string | undefined {
    const site = this.#watched
      .find((watched) => watched.chain.chainId === chainId)
      ?.sites.find((candidate) =>
        Object.values(candidate.paymasters).some((address) => isAddressEqual(address, paymaster)),
      );
    if (!site) return undefined;
    const failed = this.#verdicts
      .get(chainId)
      ?.lines.find(
        (line) =>
          !line.ok &&
          (line.check === "chainId" ||
            (line.version === site.version &&
              (line.check === "entryPoint" ||
                (line.check !== "feeToken" && line.address !== undefined && isAddressEqual(line.address, paymaster))))),
      );
    if (!failed) return undefined;
    const kind =
      failed.kind ??
      (site.paymasters.verifying && isAddressEqual(site.paymasters.verifying, paymaster) ? "verifying" : "token");
    return (
      `Our ${kind} paymaster ${paymaster} for EntryPoint v${site.version} on chain ${chainId} fails its ` +
      `${failed.check} check: ${failed.detail}`
    );
  }

  async #checkChain({ chain, config }: Watched): Promise<void> {
    const client = (this.#options.client ?? chainClient)(chain);
    const previous = this.#verdicts.get(chain.chainId);
    if (!client || !previous) return;
    try {
      const lines = await checkChain(client, config, { signer: this.#options.signer });
      this.#verdicts.set(chain.chainId, {
        chainId: chain.chainId,
        status: lines.every((line) => line.ok) ? "ok" : "failing",
        checkedAt: this.#options.now(),
        lines,
      });
    } catch (error) {
      // The last verdict stands: a node that does not answer says nothing about the contracts.
      this.#verdicts.set(chain.chainId, { ...previous, readError: readErrorText(error) });
    }
  }
}

/** The chains-file shape of what the service signs for on the chain (sponsoringChains.ts filled its defaults). */
function checkedConfig(chain: SponsoringChain): ChainConfig {
  return {
    chainId: chain.chainId,
    name: chain.name,
    entryPoint: chain.entryPoint,
    ...(chain.verifyingPaymaster ? { verifyingPaymaster: chain.verifyingPaymaster } : {}),
    ...(chain.tokenPaymaster ? { tokenPaymaster: chain.tokenPaymaster } : {}),
    ...(chain.tokens ? { tokens: [...chain.tokens] } : {}),
    entryPoints: Object.fromEntries(chain.entryPoints),
  };
}

/** The first line of a read's error: viem's messages go on with the request, whose URL may carry an API key. */
function readErrorText(error: unknown): string {
  const short = (error as { shortMessage?: unknown }).shortMessage;
  const text = typeof short === "string" ? short : error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? "the read failed";
}
