import { type ContractAbi, parseContractAbi } from "./contractAbi";

/**
 * The parsed ABI of each whitelisted contract, kept for the life of the process, so that reloading a paymaster's setup
 * parses only the contracts added since: at 10,000 contracts, parsing them all again took over a second. Keyed by the
 * contract's row id, because a row's ABI is never changed in place (an update changes its whitelisted methods only;
 * deleting and whitelisting it again makes a new row). Bounded: when full it starts over, which only costs parsing.
 */
export class ParsedAbis {
  readonly #byContract = new Map<string, ContractAbi>();

  constructor(
    private readonly parse: (abiText: string) => ContractAbi = parseContractAbi,
    private readonly maxEntries = 100_000,
  ) {}

  of(contractId: string, abiText: string): ContractAbi {
    const known = this.#byContract.get(contractId);
    if (known) return known;
    const parsed = this.parse(abiText);
    if (this.#byContract.size >= this.maxEntries) this.#byContract.clear();
    this.#byContract.set(contractId, parsed);
    return parsed;
  }
}

/** The one the service uses: every paymaster's contracts share it. */
export const sharedParsedAbis = new ParsedAbis();
