const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

export const formatInteger = (value: number) => integer.format(value);
export const formatDecimal = (value: number) => decimal.format(value);
export const formatPercent = (value: number) => `${decimal.format(value)} %`;
/** Seconds as `1m 05s`. */
export function formatDuration(seconds: number): string {
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m ${String(whole % 60).padStart(2, "0")}s` : `${whole}s`;
}
/** Cents as an amount with two decimals. */
export const formatRevenue = (cents: number) =>
  new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(cents / 100);

/** The change from `previous` to `current` in percent, or undefined when there is no base. */
export function percentChange(current: number, previous: number): number | undefined {
  return previous === 0 ? undefined : ((current - previous) / previous) * 100;
}
