import type { Address } from "viem";
import type { KnownEntryPointVersion } from "../../bindings/entryPoints/versions";
import { type DepositBalances, depositKey, EXPIRY_MARGIN_SECONDS } from "../../chain/paymasterDeposit";
import type { SponsoringChain } from "../../chain/sponsoringChains";
import type { DepositFigure } from "../../storage/alerts";
import type { OutstandingCharges } from "../../storage/outstandingCharges";
import { pass, type Rule, type RuleInput, type RuleResult, refuse } from "../rule";
import { weiToEther } from "../spendingLimit";

const RULE = "deposit";

export const NO_RPC_REASON = "no RPC configured: deposit not checked";

export interface DepositRuleDeps {
  chains: ReadonlyMap<number, SponsoringChain>;
  balances: DepositBalances;
  outstanding: OutstandingCharges;
  /** Sponsorships of this process between their check and their record; one per app. */
  inFlight?: InFlightCharges;
  /**
   * Told what the check read, after the sponsorship is recorded (or refused here): the deposit alert's cheap check
   * (docs/alerts.md). Must not throw nor block: the sponsorship does not wait for it.
   */
  observe?: (reading: DepositReading) => void;
}

/**
 * A reading of a deposit for the deposit alert, with its place among this process's readings (`ReadEnd.order`) and
 * whether its outstanding amount is exact (`ReadEnd.exact`).
 */
export interface DepositReading extends Omit<DepositFigure, "at"> {
  order: number;
  exact: boolean;
}

/**
 * The deposit check of the issue's part 4: the dApp's balance in the verifying paymaster of the operation's EntryPoint
 * version, less what its outstanding sponsorships there can still cost, must cover this operation's worst case (what
 * the contract reserves in validation).
 *
 * Outstanding = the recorded sponsorships (one batched query of deposit_holds, which the record adds to and
 * settlement takes from) + those of this process that passed this rule and are not recorded yet (`InFlightCharges`), so
 * concurrent requests of one instance cannot both spend the same balance. Each signature counts, even several of one
 * operation (a wallet that asks twice): until one of them is mined, which releases the others, the check errs towards
 * refusing. Other
 * instances' in-flight requests are not seen; the contract reserves each operation's worst case in validation, so an
 * operation signed past the deposit that way fails validation on chain and costs the deposit nothing.
 *
 * A chain without an RPC signs without the check and says so in the rule's outcome; an RPC that fails refuses, since a
 * signature must never be given past an unknown deposit.
 */
export function depositRule(deps: DepositRuleDeps): Rule {
  const inFlight = deps.inFlight ?? new InFlightCharges();
  return {
    name: RULE,
    async evaluate(input) {
      return checkDeposit(deps, inFlight, input, ({ key, needed, held, observe }) => {
        const hold = inFlight.hold(key, needed);
        return {
          ...pass(RULE),
          release: async () => hold.drop(),
          afterRecord: (isRecorded) => {
            if (!isRecorded) return hold.drop();
            hold.recorded();
            observe(held + needed);
          },
        };
      });
    },
  };
}

/**
 * The same check for pm_getPaymasterStubData, which signs nothing: it reads the balance and what is outstanding (the
 * in-flight charges of `deps.inFlight` included, when the sponsorships' rule shares it), holds nothing and tells the
 * deposit alert nothing (a stub is no sponsorship, and it must not write).
 */
export function depositReadRule(deps: DepositRuleDeps): Rule {
  const inFlight = deps.inFlight ?? new InFlightCharges();
  const { observe: _, ...reading } = deps;
  return {
    name: RULE,
    async evaluate(input) {
      return checkDeposit(reading, inFlight, input, () => pass(RULE));
    },
  };
}

interface Covered {
  key: string;
  needed: bigint;
  held: bigint;
  /** Tells the deposit alert what was read, with `outstandingWei` held. */
  observe: (outstandingWei: bigint) => void;
}

/**
 * The check itself; when the deposit covers the operation, `covered` answers, called in the same synchronous step as
 * the comparison: a hold it makes is then seen by every concurrent check that compares after it (an await in between
 * would let another request compare against a sum without this one).
 */
async function checkDeposit(
  deps: DepositRuleDeps,
  inFlight: InFlightCharges,
  input: RuleInput,
  covered: (covered: Covered) => RuleResult,
): Promise<RuleResult> {
  const chain = versionChain(deps.chains.get(input.setup.chainId), input.version.name);
  // Without a verifying paymaster nothing is signed (the sponsorship refuses before the rules run).
  if (!chain?.verifyingPaymaster) return pass(RULE);
  if (!chain.rpcUrl) return { ...pass(RULE), reason: NO_RPC_REASON };
  const wallet = (input.setup.fundingAddress as Address).toLowerCase() as Address;
  const needed = input.version.depositChargeWei(input.userOp);
  const key = depositKey(chain.chainId, chain.verifyingPaymaster, wallet);

  const snapshot = inFlight.beginRead();
  let recorded: bigint;
  let read: Awaited<ReturnType<DepositBalances["get"]>>;
  let inFlightNow: ReadEnd;
  try {
    [read, recorded] = await Promise.all([
      deps.balances.get(chain, wallet),
      deps.outstanding.of({
        chainId: chain.chainId,
        paymasterAddress: chain.verifyingPaymaster.toLowerCase(),
        fundingAddress: wallet,
        notBefore: Math.floor(input.nowMs / 1000) - EXPIRY_MARGIN_SECONDS,
      }),
    ]);
  } finally {
    inFlightNow = inFlight.endRead(snapshot, key);
  }
  if (!read.ok) {
    return refuse(
      RULE,
      `Deposit not checked: reading it through the RPC of chain ${chain.chainId} (${chain.name}) failed: ` +
        `${read.error}; no operation is sponsored past a deposit that cannot be read`,
    );
  }
  const held = recorded + inFlightNow.held;
  const balance = read.balance;
  const observe = (outstandingWei: bigint) =>
    deps.observe?.({
      paymasterId: input.setup.paymasterId,
      chainId: chain.chainId,
      paymasterAddress: (chain.verifyingPaymaster as Address).toLowerCase(),
      entryPointVersion: input.version.name,
      depositWei: balance,
      outstandingWei,
      nowMs: input.nowMs,
      order: inFlightNow.order,
      exact: inFlightNow.exact,
    });
  if (balance - held < needed) {
    observe(held);
    return refuse(
      RULE,
      `Deposit too small: the paymaster's deposit for ${wallet} is ${weiToEther(balance)} ETH, ` +
        `${weiToEther(held)} ETH is held by unexpired sponsorships, ` +
        `this operation needs up to ${weiToEther(needed)} ETH`,
    );
  }
  return covered({ key, needed, held, observe });
}

/**
 * The chain as the deposit check sees it for an operation of `version`: its verifying paymaster is the one of that
 * EntryPoint version (each version has its own contract, each with its own per-dApp balances).
 */
function versionChain(
  chain: SponsoringChain | undefined,
  version: KnownEntryPointVersion,
): SponsoringChain | undefined {
  if (!chain || version === "0.6") return chain;
  const verifyingPaymaster = chain.entryPoints.get(version)?.verifyingPaymaster;
  const { verifyingPaymaster: _, ...rest } = chain;
  return verifyingPaymaster ? { ...rest, verifyingPaymaster } : rest;
}

/** What a read of the recorded charges adds to its query's sum, and when it ended. */
export interface ReadEnd {
  /** The charges of `key` in flight, or recorded while the query ran (so perhaps not in its sum). */
  held: bigint;
  /**
   * No charge of `key` was in flight when the read ended nor recorded while it ran: its query's sum is the outstanding
   * amount exactly. Otherwise `held` may count a charge the query also counted (recorded in the database, not yet
   * marked so here), which is safe for the deposit check (it errs towards refusing) but not for the deposit alert: a
   * reading too low, then a right one, would cross the threshold down and up and alert twice for one crossing.
   */
  exact: boolean;
  /**
   * Strictly increasing in the order reads end, per process: a read counts every hold placed before it ended (the hold
   * is placed in the same synchronous step as the deposit check's comparison), so of two readings of one deposit the
   * one with the larger order is the newer, whichever is written first.
   */
  order: number;
}

export interface Hold {
  /** The sponsorship's record is durable: from now on the outstanding query counts it. */
  recorded(): void;
  /** Nothing was signed (or nothing was given out): forget it. */
  drop(): void;
}

/**
 * The charges of this process's sponsorships between the deposit check and their record, per deposit.
 *
 * The difficulty is the hand-over: a sponsorship recorded while another request's outstanding query runs may be missing
 * from that query's snapshot after it has left the in-flight sum. So each read notes a version before its query, and
 * a charge recorded after that version still counts for it (`endRead`). Counting a charge twice is possible for that
 * instant (it errs towards refusing); missing one is not.
 *
 * The deposit alert's readings (the deposit check's and the periodic check's) go through here as well, which gives
 * them an order: see `ReadEnd.order`.
 */
export class InFlightCharges {
  readonly #held = new Map<string, bigint>();
  /** Charges recorded while a read was under way, with the version their record made. */
  #recorded: { version: number; key: string; amount: bigint }[] = [];
  #version = 0;
  /** Reads under way, by the version each started at. */
  readonly #reads = new Map<number, number>();
  /** Reads ended so far: the last one's `order`. */
  #readings = 0;

  /** Starts a read of the recorded charges (the outstanding query): its version, for `endRead`. */
  beginRead(): number {
    const version = this.#version;
    this.#reads.set(version, (this.#reads.get(version) ?? 0) + 1);
    return version;
  }

  /**
   * Ends the read that started at `version` once its query has answered: what it adds for `key` to the query's sum
   * (in flight now, plus recorded since it started) and its place among this process's readings.
   */
  endRead(version: number, key: string): ReadEnd {
    // Summed before the charges recorded during this read are let go below: its query may have missed them.
    const inFlightNow = this.#held.get(key) ?? 0n;
    let held = inFlightNow;
    for (const r of this.#recorded) if (r.version > version && r.key === key) held += r.amount;
    const exact = held === 0n;
    const left = (this.#reads.get(version) ?? 1) - 1;
    if (left > 0) this.#reads.set(version, left);
    else this.#reads.delete(version);
    // Charges recorded at or before the oldest read under way are in every later query's snapshot.
    const oldest = this.#reads.size === 0 ? this.#version : Math.min(...this.#reads.keys());
    if (this.#recorded.length > 0) this.#recorded = this.#recorded.filter((r) => r.version > oldest);
    return { held, order: ++this.#readings, exact };
  }

  hold(key: string, amount: bigint): Hold {
    this.#held.set(key, (this.#held.get(key) ?? 0n) + amount);
    let open = true;
    const drop = () => {
      if (!open) return;
      open = false;
      const left = (this.#held.get(key) ?? 0n) - amount;
      if (left > 0n) this.#held.set(key, left);
      else this.#held.delete(key);
    };
    return {
      drop,
      recorded: () => {
        if (!open) return;
        drop();
        if (this.#reads.size > 0) this.#recorded.push({ version: ++this.#version, key, amount });
        else this.#version++;
      },
    };
  }

  /** For tests: how much is held for a deposit right now. */
  heldNow(key: string): bigint {
    return this.#held.get(key) ?? 0n;
  }
}
