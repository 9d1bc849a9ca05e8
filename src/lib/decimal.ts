/*
 * Exact decimal arithmetic on Postgres numeric text ("12", "-0.50"): sums, means and percent
 * changes of bucket values are computed without binary floating point, so a sum of 0.1 and 0.2 is
 * 0.3 and a mean of 1.005 rounds to 1.01, exactly as Postgres' numeric would.
 */

const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d*))?$/;

interface Scaled {
  units: bigint;
  scale: number;
}

function parseDecimal(text: string): Scaled {
  const match = DECIMAL_TEXT.exec(text.trim());
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign, whole = "0", fraction = ""] = match;
  const units = BigInt(`${whole}${fraction}`);
  return { units: sign === "-" ? -units : units, scale: fraction.length };
}

const TEN = BigInt(10);
const ZERO = BigInt(0);
const pow10 = (exponent: number) => TEN ** BigInt(exponent);

function rescale(value: Scaled, scale: number): bigint {
  return value.units * pow10(scale - value.scale);
}

function formatScaled(units: bigint, scale: number): string {
  const negative = units < ZERO;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale > 0 ? `.${digits.slice(digits.length - scale)}` : "";
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

/** `numerator / denominator` rounded half away from zero (Postgres' `round`); denominator > 0. */
function divideRounded(numerator: bigint, denominator: bigint): bigint {
  const negative = numerator < ZERO;
  const magnitude = negative ? -numerator : numerator;
  const rounded = (magnitude * BigInt(2) + denominator) / (denominator * BigInt(2));
  return negative ? -rounded : rounded;
}

/** The exact sum of decimal texts ("0" for none). */
export function decimalSum(values: readonly string[]): string {
  const parsed = values.map(parseDecimal);
  // A loop, not a spread into Math.max: a chart sums tens of thousands of values at once, and a
  // spread of that many arguments overflows the stack.
  const scale = parsed.reduce((widest, value) => Math.max(widest, value.scale), 0);
  return formatScaled(
    parsed.reduce((sum, value) => sum + rescale(value, scale), ZERO),
    scale,
  );
}

/** `total / count` rounded half away from zero to `decimals` places; "0" when count is 0. */
export function decimalMean(total: string, count: number, decimals: number): string {
  if (count <= 0) return "0";
  const value = parseDecimal(total);
  const numerator = value.units * pow10(decimals);
  return formatScaled(divideRounded(numerator, BigInt(count) * pow10(value.scale)), decimals);
}

export function compareDecimals(a: string, b: string): number {
  const x = parseDecimal(a);
  const y = parseDecimal(b);
  const scale = Math.max(x.scale, y.scale);
  const difference = rescale(x, scale) - rescale(y, scale);
  return difference < ZERO ? -1 : difference > ZERO ? 1 : 0;
}

/**
 * The signed percent change from `previous` to `current`, rounded half away from zero to one
 * decimal; relative to |previous|, so a rise is positive even from a negative value. Null when
 * `previous` is 0 (no finite change).
 */
export function percentChange(current: string, previous: string): number | null {
  const x = parseDecimal(current);
  const y = parseDecimal(previous);
  const scale = Math.max(x.scale, y.scale);
  const before = rescale(y, scale);
  if (before === ZERO) return null;
  const difference = rescale(x, scale) - before;
  const tenths = divideRounded(difference * BigInt(1000), before < ZERO ? -before : before);
  // BigInt has no -0, so a change that rounds to zero is written "0.0", never "-0.0".
  return Number(formatScaled(tenths, 1));
}

/** 100 × part ÷ whole with 2 decimals, rounded half away from zero exactly; 0 when whole is 0. */
export function percentOf(part: number, whole: number): number {
  return Number(decimalMean(String(100 * part), whole, 2));
}
