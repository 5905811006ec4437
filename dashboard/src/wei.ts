/** Wei as ether, exactly (BigInt), trailing zeros dropped: 1500000000000000000 → "1.5". */
export function formatEther(wei: string | bigint | null | undefined): string {
  return formatUnits(wei, 18);
}

/** Base units as whole units of `decimals`, exactly, trailing zeros dropped: (1500000, 6) → "1.5". */
export function formatUnits(amount: string | bigint | null | undefined, decimals: number): string {
  if (amount === null || amount === undefined) return "–";
  const value = BigInt(amount);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const unit = 10n ** BigInt(decimals);
  const whole = abs / unit;
  const fraction = decimals === 0 ? "" : (abs % unit).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** ERC20 mode's amounts of a ledger row, as the ledger answers them (GET sponsorships' `token`). */
export interface TokenAmounts {
  symbol: string | null;
  decimals: number | null;
  maxCharge: string | null;
  charge: string | null;
  refund: string | null;
}

/**
 * What a row paid in its fee token: once mined the charge, and the refund where the up-front token paymaster gave some
 * back; before, the most it can be charged. Base units where the row has no decimals recorded.
 */
export function tokenCost(token: TokenAmounts): string {
  const symbol = token.symbol ?? "";
  const amount = (value: string) =>
    token.decimals === null
      ? `${value} base units${symbol ? ` of ${symbol}` : ""}`
      : `${formatUnits(value, token.decimals)}${symbol ? ` ${symbol}` : ""}`;
  if (token.charge !== null) {
    const refund = token.refund !== null && token.refund !== "0" ? ` (${amount(token.refund)} refunded)` : "";
    return `${amount(token.charge)}${refund}`;
  }
  return token.maxCharge === null ? "–" : `at most ${amount(token.maxCharge)}`;
}

/** Ether as typed by a person ("0.05") to wei; undefined when it is not a plain decimal. */
export function parseEther(text: string): bigint | undefined {
  const match = /^\s*(\d+)(?:\.(\d{1,18}))?\s*$/.exec(text);
  if (!match) return undefined;
  return BigInt(match[1] as string) * 10n ** 18n + BigInt((match[2] ?? "").padEnd(18, "0"));
}

export const shortHex = (hex: string | null | undefined) =>
  hex ? (hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex) : "–";
