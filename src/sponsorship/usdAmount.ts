// Dollars for USD rules, exactly: amounts are whole numbers of 10^-18 dollar ("USD units"), the
// native token's price is an integer with a number of decimals, and every step is bigint arithmetic. An operation's
// cost is rounded up and a threshold down, so that a USD limit or cap is never exceeded by a rounding.
import type { NativeUsdPrice, NativeUsdPriceSource, PriceReading } from "../chain/nativeUsdPrice";
import { etherToWei, weiToEther } from "./spendingLimit";

/**
 * A cost in wei as USD units at `price`, rounded up. One wei is 10^-18 native token and one USD unit 10^-18 dollar,
 * so the number of USD units is wei × price exactly: wei × answer / 10^decimals, the remainder rounding up.
 */
export function weiToUsdUnits(wei: bigint, price: NativeUsdPrice): bigint {
  const scaled = wei * price.answer;
  const divisor = 10n ** BigInt(price.decimals);
  return (scaled + divisor - 1n) / divisor;
}

/** A dollar amount given as a JSON number, in USD units, exactly as written (digits below 10^-18 dollar dropped). */
export const dollarsToUsdUnits = (dollars: number): bigint => etherToWei(dollars);

/** USD units as dollars, with every significant digit ("12.5", "0.000000000000000001"). */
export const usdUnitsToDollars = (units: bigint): string => weiToEther(units);

/** The price as a plain decimal ("2345.67"): what the record keeps and messages show. */
export function priceText(price: NativeUsdPrice): string {
  const divisor = 10n ** BigInt(price.decimals);
  const whole = price.answer / divisor;
  const fraction = (price.answer % divisor).toString().padStart(price.decimals, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/**
 * The price one sponsorship request uses: read at most once, when the first USD rule needs it, so that every USD rule
 * of the request and its record see the same price. `used` is what the record keeps.
 */
export class RequestPrice {
  #reading: Promise<PriceReading> | undefined;
  #used: NativeUsdPrice | undefined;

  constructor(
    private readonly source: NativeUsdPriceSource | undefined,
    private readonly chainId: number,
    private readonly nowMs: number,
  ) {}

  read(): Promise<PriceReading> {
    this.#reading ??= this.#readOnce();
    return this.#reading;
  }

  /** The price a USD rule used, if one did. */
  get used(): NativeUsdPrice | undefined {
    return this.#used;
  }

  async #readOnce(): Promise<PriceReading> {
    if (!this.source) {
      return {
        ok: false,
        reason: `No native token price is configured for chain ${this.chainId} (chains file, nativeUsdPrice)`,
      };
    }
    const reading = await this.source.read(this.nowMs);
    if (reading.ok) this.#used = reading.price;
    return reading;
  }
}
