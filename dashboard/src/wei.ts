/** Wei as ether, exactly (BigInt), trailing zeros dropped: 1500000000000000000 → "1.5". */
export function formatEther(wei: string | bigint | null | undefined): string {
  if (wei === null || wei === undefined) return "–";
  const value = BigInt(wei);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / 10n ** 18n;
  const fraction = (abs % 10n ** 18n).toString().padStart(18, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction ? `.${fraction}` : ""}`;
}

/** Ether as typed by a person ("0.05") to wei; undefined when it is not a plain decimal. */
export function parseEther(text: string): bigint | undefined {
  const match = /^\s*(\d+)(?:\.(\d{1,18}))?\s*$/.exec(text);
  if (!match) return undefined;
  return BigInt(match[1] as string) * 10n ** 18n + BigInt((match[2] ?? "").padEnd(18, "0"));
}

export const shortHex = (hex: string | null | undefined) =>
  hex ? (hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex) : "–";
