import type { StoredPolicyData } from "../schemas/management/policies";

/**
 * The settings of a `PAYMASTER_SA_LIMIT` rule as stored: `type` PAYMASTER counts every operation of the dApp,
 * SMART_ACCOUNT each sender on its own; `threshold` is operations (COUNT, a whole number), gas spend in ether
 * (NATIVE_ASSET) or in US dollars (USD).
 */
export type SpendingLimit = StoredPolicyData["PAYMASTER_SA_LIMIT"];

export type CycleDuration = SpendingLimit["cycleDuration"];

/** The units whose cycles follow each other back to back from the anchor, each exactly this long. */
const FIXED_UNIT_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
const WEEK_MS = 7 * 86_400_000;

/** One cycle of a limit: from `startMs` (included) to `endMs` (excluded). */
export interface Cycle {
  startMs: number;
  endMs: number;
}

/** Monday 00:00 UTC of the ISO week that contains `ms`. */
export function weekStartMs(ms: number): number {
  const date = new Date(ms);
  const daysSinceMonday = (date.getUTCDay() + 6) % 7;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()) - daysSinceMonday * 86_400_000;
}

/** Months since January of year 0, in UTC: calendar months as a number that adds and divides. */
const monthIndex = (ms: number) => {
  const date = new Date(ms);
  return date.getUTCFullYear() * 12 + date.getUTCMonth();
};
const monthStartMs = (index: number) => Date.UTC(Math.floor(index / 12), index % 12, 1);

/**
 * The cycle that contains `nowMs`, for a limit whose cycles were anchored at `anchorMs` (its creation or last update).
 *
 * minute, hour and day: cycles of value × unit follow each other back to back from the anchor, so a pause never
 * moves them (the behaviour hour and day always had). week and month follow the calendar in UTC: a cycle of N weeks
 * starts on a Monday 00:00 UTC (ISO weeks), one of N months on the 1st at 00:00 UTC, counted from the week or month
 * of the anchor; the first cycle starts at the anchor itself and ends at the next such boundary, so that the usage
 * before a creation or an update never counts. An instant before the anchor belongs to the first cycle.
 */
export function currentCycle(anchorMs: number, cycle: CycleDuration, nowMs: number): Cycle {
  const at = Math.max(nowMs, anchorMs);
  if (cycle.unit === "week" || cycle.unit === "month") {
    let alignedStart: number;
    let alignedEnd: number;
    if (cycle.unit === "week") {
      const base = weekStartMs(anchorMs);
      const length = cycle.value * WEEK_MS;
      alignedStart = base + Math.floor((at - base) / length) * length;
      alignedEnd = alignedStart + length;
    } else {
      const base = monthIndex(anchorMs);
      const first = base + Math.floor((monthIndex(at) - base) / cycle.value) * cycle.value;
      alignedStart = monthStartMs(first);
      alignedEnd = monthStartMs(first + cycle.value);
    }
    return { startMs: Math.max(alignedStart, anchorMs), endMs: alignedEnd };
  }
  const length = cycle.value * FIXED_UNIT_MS[cycle.unit];
  const startMs = anchorMs + Math.floor((at - anchorMs) / length) * length;
  return { startMs, endMs: startMs + length };
}

/** The start of the cycle that contains `nowMs` (currentCycle): the key its usage is counted under. */
export const currentCycleStartMs = (anchorMs: number, cycle: CycleDuration, nowMs: number): number =>
  currentCycle(anchorMs, cycle, nowMs).startMs;

/** How long the cycle that contains `nowMs` lasts: value × unit, except a calendar cycle's first or a month's. */
export function cycleLengthMs(anchorMs: number, cycle: CycleDuration, nowMs: number): number {
  const { startMs, endMs } = currentCycle(anchorMs, cycle, nowMs);
  return endMs - startMs;
}

/** Each text unit and the cycle unit it means; "m" alone is not one (minute or month?). */
const TEXT_UNITS: [RegExp, CycleDuration["unit"]][] = [
  [/^(min|mins|minutes?)$/, "minute"],
  [/^(h|hours?)$/, "hour"],
  [/^(d|days?)$/, "day"],
  [/^(w|weeks?)$/, "week"],
  [/^(mo|months?)$/, "month"],
];

/**
 * The string forms the limit update accepts besides the object: "3 hour", "3 hours", "3h", "1 day", "2d", and
 * "30 min", "30 minutes", "1 week", "2w", "1 month", "3mo".
 */
export function parseCycleDurationText(text: string): CycleDuration | undefined {
  const match = /^\s*(\d+)\s*([a-z]+)\s*$/i.exec(text);
  if (!match) return undefined;
  const word = (match[2] as string).toLowerCase();
  const unit = TEXT_UNITS.find(([pattern]) => pattern.test(word))?.[1];
  return unit ? { value: Number(match[1]), unit } : undefined;
}

const WEI_PER_ETHER_DIGITS = 18;

/**
 * An ether amount given as a JSON number, in wei, exactly as written: 0.05 is 5·10^16 wei, not the binary float's
 * neighbour. Digits beyond the 18th decimal (below one wei) are dropped.
 */
export function etherToWei(ether: number): bigint {
  let text = String(ether);
  if (/e/i.test(text)) text = ether.toFixed(20);
  const [whole = "0", fraction = ""] = text.split(".");
  return BigInt(whole) * 10n ** 18n + BigInt(fraction.padEnd(WEI_PER_ETHER_DIGITS, "0").slice(0, WEI_PER_ETHER_DIGITS));
}

/** Wei as ether, with every significant digit (formatEther without a float in between). */
export function weiToEther(wei: bigint): string {
  const whole = wei / 10n ** 18n;
  const fraction = (wei % 10n ** 18n).toString().padStart(WEI_PER_ETHER_DIGITS, "0").replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/**
 * The threshold in the ledger's unit: operations for COUNT, wei for NATIVE_ASSET, and for USD 10^-18 dollar, which
 * the same exact 18-decimal arithmetic as ether reads and writes (src/sponsorship/usdAmount.ts).
 */
export function thresholdUnits(limit: SpendingLimit): bigint {
  // Every sponsorship under a limit asks, and the cached setup keeps the same limit object between reloads: its last
  // answer is kept with the figures it came from, so a limit changed in place is converted again.
  const last = converted.get(limit);
  if (last && last.threshold === limit.threshold && last.thresholdType === limit.thresholdType) return last.units;
  const units = limit.thresholdType === "COUNT" ? BigInt(limit.threshold) : etherToWei(limit.threshold);
  converted.set(limit, { threshold: limit.threshold, thresholdType: limit.thresholdType, units });
  return units;
}

const converted = new WeakMap<SpendingLimit, Pick<SpendingLimit, "threshold" | "thresholdType"> & { units: bigint }>();

/** A usage in the threshold's own unit (operations, ether or dollars), for messages and the usage endpoint. */
export const formatUsage = (limit: SpendingLimit, units: bigint): string =>
  limit.thresholdType === "COUNT" ? units.toString() : weiToEther(units);
