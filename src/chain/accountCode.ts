// Whether an address has code, read through the chain's node: what tells a deployed account from one an operation
// deploys (src/sponsorship/senderDeployment.ts). Only an answer that cannot change back is kept: contract code stays
// where it is (SELFDESTRUCT no longer clears it outside its creating transaction), while an address without code may
// be deployed in the next block and an EIP-7702 delegation may be replaced or cleared by the next authorization.
import type { Address, Hex } from "viem";
import { CHAIN_RPC_TIMEOUT_MS, chainClient } from "./chainClient";
import type { SponsoringChain } from "./sponsoringChains";
import { describeTransportError } from "./transportError";

/** The code at an address ("0x" for none), or why it could not be read. */
export type CodeReading = { ok: true; code: Hex } | { ok: false; error: string };

/** Where a chain's account code comes from; one per chain and app, so its cache never outlives the chain it read. */
export interface AccountCodeSource {
  /** The code at `address`; `nowMs`, the service's clock, tells whether code kept earlier is still fresh. */
  read(address: Address, nowMs: number): Promise<CodeReading>;
}

/** The code an EIP-7702 delegated account shows: 0xef0100 followed by the delegate's address. */
export const EIP7702_DELEGATION_PREFIX = "0xef0100";

const isDelegation = (code: Hex): boolean => code.toLowerCase().startsWith(EIP7702_DELEGATION_PREFIX);

/** How long contract code is reused; long, as it cannot change, and bounded only so the map does not grow forever. */
const CONTRACT_CODE_TTL_MS = 10 * 60_000;
const MAX_KEPT = 10_000;

export interface AccountCodesOptions {
  /** Reads the code; by default eth_getCode at the latest block through the chain's RPC. */
  getCode?: (address: Address) => Promise<Hex | undefined>;
}

/**
 * One chain's account code with a cache of contract code. Concurrent reads of one address share one call; a read
 * that fails or finds no code (or a delegation) is not kept, so the next request asks the node again. Deployments are
 * once per account, so the reads that are not kept are rare; the ones kept spare a call per deployed sender that
 * names a factory again.
 */
export class AccountCodes implements AccountCodeSource {
  readonly #kept = new Map<string, { at: number; reading: Promise<CodeReading> }>();
  readonly #pending = new Map<string, Promise<CodeReading>>();
  readonly #getCode: (address: Address) => Promise<Hex | undefined>;

  constructor(chain: Pick<SponsoringChain, "rpcUrl">, options: AccountCodesOptions = {}) {
    this.#getCode = options.getCode ?? ((address) => getCodeThroughRpc(chain, address));
  }

  read(address: Address, now: number): Promise<CodeReading> {
    const key = address.toLowerCase();
    const kept = this.#kept.get(key);
    if (kept && now - kept.at < CONTRACT_CODE_TTL_MS) return kept.reading;
    const pending = this.#pending.get(key);
    if (pending) return pending;
    const reading = this.#getCode(address).then(
      (code): CodeReading => ({ ok: true, code: (code ?? "0x").toLowerCase() as Hex }),
      (error: unknown): CodeReading => ({ ok: false, error: describeTransportError(error, CHAIN_RPC_TIMEOUT_MS) }),
    );
    this.#pending.set(key, reading);
    void reading.then((result) => {
      this.#pending.delete(key);
      if (!result.ok || result.code === "0x" || isDelegation(result.code)) return;
      if (this.#kept.size >= MAX_KEPT) this.#kept.clear();
      this.#kept.set(key, { at: now, reading });
    });
    return reading;
  }
}

/**
 * The chain's reader: the one sponsoringChains made with its RPC, or for a chain put together without it (a test's), an
 * uncached one; undefined without an RPC, where nothing can be read.
 */
export function accountCodeOf(chain: Pick<SponsoringChain, "rpcUrl" | "accountCode">): AccountCodeSource | undefined {
  return chain.accountCode ?? (chain.rpcUrl ? new AccountCodes(chain) : undefined);
}

async function getCodeThroughRpc(chain: Pick<SponsoringChain, "rpcUrl">, address: Address): Promise<Hex | undefined> {
  const client = chainClient(chain);
  if (!client) throw new Error("no RPC configured");
  return client.getCode({ address });
}
