import { type Address, BaseError, ContractFunctionZeroDataError, HttpRequestError, TimeoutError } from "viem";
import { verifyingPaymasterAbi } from "../../contracts/artifacts/VerifyingPaymaster.abi";
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "./chainClient";
import type { SponsoringChain } from "./sponsoringChains";

/**
 * How long after its validUntil a sponsorship still counts against the deposit: block timestamps may lag our clock,
 * and settlement needs a moment to see the block. Settlement releases expired sponsorships after the same margin.
 */
export const EXPIRY_MARGIN_SECONDS = 60;

/** The key of one deposit: a funding wallet's balance in one verifying paymaster of one chain (any case given). */
export const depositKey = (chainId: number, verifyingPaymaster: string, fundingAddress: string): string =>
  `${chainId}:${verifyingPaymaster.toLowerCase()}:${fundingAddress.toLowerCase()}`;

export type BalanceRead = { ok: true; balance: bigint } | { ok: false; error: string };

export interface DepositBalancesOptions {
  /** How long a balance read (or a failed read) is reused. */
  ttlMs?: number;
  /** The service's clock (ms), which ages the reads kept. */
  now: () => number;
  /** Reads one balance; by default `getBalance(wallet)` of the chain's verifying paymaster through its RPC. */
  read?: (chain: SponsoringChain, wallet: Address) => Promise<bigint>;
}

const DEPOSIT_BALANCE_TTL_MS = 2_000;

interface Entry {
  /** When the read finished; undefined while it is under way (every caller shares it then). */
  at?: number;
  read: Promise<BalanceRead>;
}

/**
 * The dApps' balances in the verifying paymaster, read through each chain's RPC and kept for a short time per chain,
 * contract and wallet, so a burst of requests costs one call. A failed read is kept as long, so a dead RPC is asked
 * once per period and not once per request; every read is bounded by the client's timeout.
 */
export class DepositBalances {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #read: (chain: SponsoringChain, wallet: Address) => Promise<bigint>;

  constructor(options: DepositBalancesOptions) {
    this.#ttlMs = options.ttlMs ?? DEPOSIT_BALANCE_TTL_MS;
    this.#now = options.now;
    this.#read = options.read ?? readBalance;
  }

  get(chain: SponsoringChain, wallet: Address): Promise<BalanceRead> {
    const key = depositKey(chain.chainId, String(chain.verifyingPaymaster), wallet);
    const now = this.#now();
    const cached = this.#entries.get(key);
    if (cached && (cached.at === undefined || now - cached.at < this.#ttlMs)) return cached.read;
    if (this.#entries.size >= 10_000) this.#sweep(now);
    const entry: Entry = {
      read: this.#read(chain, wallet).then(
        (balance) => ({ ok: true, balance }),
        (error: unknown) => ({ ok: false, error: describeChainError(error, chain) }),
      ),
    };
    void entry.read.then(() => {
      entry.at = this.#now();
    });
    this.#entries.set(key, entry);
    return entry.read;
  }

  /** Forgets a balance, e.g. after a settlement moved it. */
  forget(chain: SponsoringChain, wallet: Address): void {
    this.#entries.delete(depositKey(chain.chainId, String(chain.verifyingPaymaster), wallet));
  }

  #sweep(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (entry.at !== undefined && now - entry.at >= this.#ttlMs) this.#entries.delete(key);
    }
  }
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

async function readBalance(chain: SponsoringChain, wallet: Address): Promise<bigint> {
  const client = chainClient(chain);
  if (!client || !chain.verifyingPaymaster) throw new Error("no RPC or no verifying paymaster configured");
  return client.readContract({
    address: chain.verifyingPaymaster,
    abi: verifyingPaymasterAbi,
    functionName: "getBalance",
    args: [wallet],
  });
}

/**
 * What went wrong with a call to a chain's node, in a few words and without the RPC URL (which often carries the
 * provider's API key): for refusal reasons and logs.
 */
export function describeChainError(error: unknown, chain: Pick<SponsoringChain, "verifyingPaymaster">): string {
  if (!(error instanceof BaseError)) return error instanceof Error ? error.message : String(error);
  if (error.walk((e) => e instanceof TimeoutError)) return `no answer within ${CHAIN_RPC_TIMEOUT_MS} ms`;
  if (error.walk((e) => e instanceof ContractFunctionZeroDataError)) {
    return `no verifying paymaster contract answers at ${chain.verifyingPaymaster}`;
  }
  const http = error.walk((e) => e instanceof HttpRequestError) as HttpRequestError | null;
  if (http?.status !== undefined) return `HTTP status ${http.status}`;
  // The network error under fetch: its code (ECONNREFUSED, ENOTFOUND, …) or its message.
  let cause: unknown = error;
  while (cause instanceof Error && cause.cause instanceof Error) cause = cause.cause;
  const leaf = cause as Error & { code?: string };
  if (leaf !== error) return (leaf.code && NETWORK_ERRORS[leaf.code]) ?? leaf.code ?? leaf.message;
  return error.shortMessage;
}
