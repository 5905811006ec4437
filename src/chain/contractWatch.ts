// The service's own check of its contracts on every chain with a node: at start, then every interval, each of our
// paymasters is read (src/chain/contractChecks.ts) and the verdict kept in memory. /readyz reports it per chain, the
// chains endpoint shows it, and the sponsorship engine refuses an operation for a paymaster that fails a check before
// signing anything, naming the check. A rotation of the signer or a change of stake on chain is seen at the next pass,
// without a restart.
import type { Address, PublicClient } from "viem";
import { isAddressEqual } from "viem";
import { chainClient } from "./chainClient";
import { type CheckLine, type ConfiguredContract, checkContract, configuredContracts } from "./contractChecks";
import type { SponsoringChain } from "./sponsoringChains";

/**
 * How often the contracts are read again. A pass costs four reads per paymaster; half a minute keeps a change seen
 * within a minute (the interval plus a pass bounded by the RPC timeout) at about ten reads a minute per contract.
 */
export const CONTRACT_CHECK_INTERVAL_MS = 30_000;

export interface ContractVerdict extends ConfiguredContract {
  /** The last pass's lines; empty until a pass has read the contract. */
  lines: readonly CheckLine[];
  /** The first failed line, if any: what a sponsorship's refusal names. */
  failed?: CheckLine;
  /** Why the last pass could not read the contract (the node did not answer); the lines above are then older. */
  readError?: string;
}

export type ChainCheckStatus = "ok" | "failing" | "unknown";

export interface ChainChecks {
  chainId: number;
  /** ok: every contract passed; failing: one failed a check; unknown: no pass has read every contract (no answer). */
  status: ChainCheckStatus;
  /** When the last pass ended (ms since the epoch). */
  checkedAt?: number;
  contracts: readonly ContractVerdict[];
}

export interface ContractWatchOptions {
  chains: ReadonlyMap<number, SponsoringChain>;
  /** The service's verifying signer, which must be in every paymaster's signer set. */
  signer: Address;
  intervalMs?: number;
  /** Chains not to check: the development chain the service deploys itself. */
  exclude?: readonly number[];
  now?: () => number;
  /** The node of a chain; by default the shared client of its rpcUrl. */
  client?: (chain: SponsoringChain) => PublicClient | undefined;
}

/** Runs the checks of every chain that has an rpcUrl and our contracts, and keeps each chain's latest verdict. */
export class ContractWatch {
  readonly #options: ContractWatchOptions;
  readonly #watched: SponsoringChain[];
  readonly #verdicts = new Map<number, ChainChecks>();
  #timer?: NodeJS.Timeout;
  #pass?: Promise<void>;

  constructor(options: ContractWatchOptions) {
    this.#options = options;
    this.#watched = [...options.chains.values()].filter(
      (chain) =>
        chain.rpcUrl !== undefined &&
        !options.exclude?.includes(chain.chainId) &&
        configuredContracts(chain).length > 0,
    );
    for (const chain of this.#watched) {
      const contracts = configuredContracts(chain).map((contract) => ({ ...contract, lines: [] }));
      this.#verdicts.set(chain.chainId, { chainId: chain.chainId, status: "unknown", contracts });
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
    this.#pass ??= Promise.all(this.#watched.map((chain) => this.#checkChain(chain))).then(
      () => {
        this.#pass = undefined;
      },
      () => {
        this.#pass = undefined;
      },
    );
    return this.#pass;
  }

  /** The chain's latest verdict; undefined for a chain not checked (no rpcUrl, no contract of ours, excluded). */
  checks(chainId: number): ChainChecks | undefined {
    return this.#verdicts.get(chainId);
  }

  /**
   * Why the service must not sign for `paymaster` on the chain: its first failed check, in words for the dApp. A
   * contract never read yet (its node did not answer) is not refused here: the rules after it read the node too.
   */
  refusal(chainId: number, paymaster: Address): string | undefined {
    const verdict = this.#verdicts
      .get(chainId)
      ?.contracts.find((contract) => isAddressEqual(contract.address, paymaster) && contract.failed);
    if (!verdict?.failed) return undefined;
    return (
      `Our ${verdict.kind} paymaster ${verdict.address} for EntryPoint v${verdict.version} on chain ${chainId} ` +
      `fails its ${verdict.failed.check} check: ${verdict.failed.detail}`
    );
  }

  async #checkChain(chain: SponsoringChain): Promise<void> {
    const client = (this.#options.client ?? chainClient)(chain);
    const previous = this.#verdicts.get(chain.chainId);
    if (!client || !previous) return;
    const contracts = await Promise.all(
      previous.contracts.map(async (contract): Promise<ContractVerdict> => {
        const { lines: _lines, failed: _failed, readError: _readError, ...configured } = contract;
        try {
          const lines = await checkContract(client, configured, this.#options.signer);
          const failed = lines.find((line) => !line.ok);
          return { ...configured, lines, ...(failed ? { failed } : {}) };
        } catch (error) {
          // The last verdict stands: a node that does not answer says nothing about the contract.
          return { ...contract, readError: readErrorText(error) };
        }
      }),
    );
    const status: ChainCheckStatus = contracts.some((contract) => contract.failed)
      ? "failing"
      : contracts.every((contract) => contract.lines.length > 0)
        ? "ok"
        : "unknown";
    this.#verdicts.set(chain.chainId, {
      chainId: chain.chainId,
      status,
      checkedAt: (this.#options.now ?? Date.now)(),
      contracts,
    });
  }
}

/** The first line of a read's error: viem's messages go on with the request, whose URL may carry an API key. */
function readErrorText(error: unknown): string {
  const short = (error as { shortMessage?: unknown }).shortMessage;
  const text = typeof short === "string" ? short : error instanceof Error ? error.message : String(error);
  return text.split("\n")[0] ?? "the read failed";
}
