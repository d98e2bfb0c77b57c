/**
 * Money is integer micro-USD everywhere (1 USD = 1,000,000). Decimal text is parsed digit by digit
 * and formatted from integers, so no amount ever passes through a binary float.
 */
export type MicroUsd = number;

export const MICROS_PER_USD = 1_000_000;

/**
 * Parses a non-negative decimal USD amount (`10`, `10.5`, `0.0175`) with at most `maxDecimals`
 * places. Undefined for anything else: signs, exponents, spaces, too many places.
 */
export function parseUsd(text: string, maxDecimals = 6): MicroUsd | undefined {
  const m = /^(\d{1,12})(?:\.(\d+))?$/.exec(text);
  if (!m) return undefined;
  const frac = m[2] ?? '';
  if (frac.length > maxDecimals) return undefined;
  return Number(m[1]) * MICROS_PER_USD + Number(frac.padEnd(6, '0'));
}

/** `12345` -> `"0.012345"`: six places, as the admin CLI and the usage report show amounts. */
export function formatUsd(micros: MicroUsd): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  return `${sign}${Math.floor(abs / MICROS_PER_USD)}.${String(abs % MICROS_PER_USD).padStart(6, '0')}`;
}
