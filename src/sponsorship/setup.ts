import type { Address } from "viem";
import type { SponsorInfo } from "../storage/paymasters";
import type { ReadablePolicy, UnreadablePolicy } from "../storage/policies";
import type { Webhook } from "../storage/webhooks";

/** Everything a sponsorship decision reads about one paymaster, loaded once and cached briefly. */
export interface SponsorshipSetup {
  paymasterId: string;
  /**
   * The paymaster's setup version when this was read, which grows with every change of it: the cache keeps a setup
   * while it is unchanged. Optional so that tests can build a setup by hand.
   */
  version?: string;
  accountId: string;
  /**
   * Until when the apiKey this setup was loaded by names the paymaster (ms of the service's clock): set when a rotation
   * replaced that key and gave it a grace period; absent or null: the current key.
   */
  apiKeyUntilMs?: number | null;
  /** The paymaster's name (the dApp's own), for logs; optional so that tests can build a setup by hand. */
  name?: string;
  chainId: number;
  /** The dApp paused its whole paymaster: every request is refused before any rule runs. Absent: not paused. */
  paused?: boolean;
  /** The dApp's funding wallet, the key of its deposit on chain; null until linked. */
  fundingAddress: Address | null;
  /** Active rules only, each with its settings typed by its kind: a paused rule is not evaluated. */
  policies: ReadablePolicy[];
  /**
   * Active rules whose stored settings could not be read: while there is one, rule 1 refuses every operation (a rule
   * the service cannot read is never skipped). Absent: none (tests build a setup by hand).
   */
  unreadablePolicies?: UnreadablePolicy[];
  /** Whitelisted contracts by lowercase address: the selectors of their whitelisted methods. */
  contracts: ReadonlyMap<string, ReadonlySet<string>>;
  /** Active registered webhooks. */
  webhooks: Webhook[];
  /** ERC-7677's sponsor, given in the stub's result; absent until the dApp sets it. */
  sponsor?: SponsorInfo;
  /**
   * The web origins browsers may call the RPC URL from (lower case; empty: any) and whether an Origin header is
   * required (src/rpc/allowedOrigins.ts). Absent: any caller (tests build a setup by hand).
   */
  origins?: { allowed: ReadonlySet<string>; required: boolean };
  /**
   * How many blocks an EntryPoint v0.9 signature of SPONSORED mode stays valid: its window in block numbers
   * (src/sponsorship/blockWindow.ts). Absent: a window in seconds, as on every version.
   */
  validityBlocks?: number;
}
