/** The data of a `PAYMASTER_SA_LIMIT` rule, as the dApp sets it. */
export interface SpendingLimit {
  /** `PAYMASTER` counts every operation of the dApp, `SMART_ACCOUNT` each sender on its own. */
  type: "PAYMASTER" | "SMART_ACCOUNT";
  cycleDuration: CycleDuration;
  /** Operations (`COUNT`, a whole number) or gas spend in ether (`NATIVE_ASSET`). */
  threshold: number;
  thresholdType: "COUNT" | "NATIVE_ASSET";
}

export interface CycleDuration {
  value: number;
  unit: "hour" | "day";
}

export const LIMIT_SCOPES = ["PAYMASTER", "SMART_ACCOUNT"] as const;
export const THRESHOLD_TYPES = ["COUNT", "NATIVE_ASSET"] as const;
export const CYCLE_UNITS = ["hour", "day"] as const;

const UNIT_MS = { hour: 3_600_000, day: 86_400_000 } as const;

export const cycleLengthMs = (cycle: CycleDuration) => cycle.value * UNIT_MS[cycle.unit];

/**
 * The start of the cycle that contains `nowMs`: cycles follow each other back to back from the anchor that the
 * creation or the last limit update set, so a pause never moves them.
 */
export function currentCycleStartMs(anchorMs: number, cycle: CycleDuration, nowMs: number): number {
  const length = cycleLengthMs(cycle);
  if (nowMs <= anchorMs) return anchorMs;
  return anchorMs + Math.floor((nowMs - anchorMs) / length) * length;
}

/** The string forms the limit update accepts besides the object: "3 hour", "3 hours", "3h", "1 day", "2d". */
export function parseCycleDurationText(text: string): CycleDuration | undefined {
  const match = /^\s*(\d+)\s*(h|hours?|d|days?)\s*$/i.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = (match[2] as string).toLowerCase().startsWith("h") ? "hour" : "day";
  return { value, unit };
}
