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
 * The most an operation can cost in wei (docs/sponsorship-rpc.md, 'Sponsorship rules', rule 6): what a NATIVE_ASSET
 * limit reserves.
 */
export function worstCaseCostWei(gas: {
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (gas.callGasLimit + 3n * gas.verificationGasLimit + gas.preVerificationGas) * gas.maxFeePerGas;
}

/**
 * The most a v0.7 or v0.8 operation can cost in wei: exactly the prefund the EntryPoint takes from the paymaster's
 * deposit before validation (its _getRequiredPrefund). The paymaster's limits are their own fields there, where v0.6
 * counted the verification limit three times to cover the paymaster's validation and postOp.
 */
export function worstCaseCostWeiV07(gas: {
  verificationGasLimit: bigint;
  callGasLimit: bigint;
  paymasterVerificationGasLimit: bigint;
  paymasterPostOpGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
}): bigint {
  return (
    (gas.verificationGasLimit +
      gas.callGasLimit +
      gas.paymasterVerificationGasLimit +
      gas.paymasterPostOpGasLimit +
      gas.preVerificationGas) *
    gas.maxFeePerGas
  );
}

/** The threshold in the ledger's unit: operations for COUNT, wei for NATIVE_ASSET. */
export const thresholdUnits = (limit: SpendingLimit): bigint =>
  limit.thresholdType === "COUNT" ? BigInt(limit.threshold) : etherToWei(limit.threshold);

/** A usage in the threshold's own unit, for messages and the usage endpoint. */
export const formatUsage = (limit: SpendingLimit, units: bigint): string =>
  limit.thresholdType === "COUNT" ? units.toString() : weiToEther(units);
