/** How the console writes amounts, times and sizes: one place, so every page reads the same. */

/**
 * The API's six-decimal USD text as integer micro-USD: "0.030000" -> 30000. Read digit by digit,
 * never through a binary float, so $0.040400 stays 40400 (money is integer micro-USD throughout,
 * as on the server, src/domain/money.ts). Refuses anything but the API's unsigned decimal form, and
 * amounts of a billion dollars or more, whose micro-USD would pass 2^53 and lose digits as a number.
 */
export function toMicros(usd: string): number {
  const m = /^(\d{1,9})(?:\.(\d{1,6}))?$/.exec(usd);
  if (!m) throw new Error(`not a USD amount: ${usd}`);
  return Number(m[1]) * 1_000_000 + Number((m[2] ?? '').padEnd(6, '0'));
}

/**
 * Integer micro-USD as dollars: at least the cents, and every further digit there is, so an amount
 * is never shown rounded (a price of $0.015 must not read $0.01, below what is charged):
 * 30000 -> "$0.03", 40400 -> "$0.0404", 1500 -> "$0.0015", -250000 -> "-$0.25".
 */
export function formatMicros(micros: number): string {
  if (!Number.isSafeInteger(micros)) throw new Error(`not a whole number of micro-USD: ${micros}`);
  if (micros < 0) return `-${formatMicros(-micros)}`;
  const whole = Math.floor(micros / 1_000_000);
  const frac = String(micros % 1_000_000).padStart(6, '0');
  const cents = frac.slice(0, 2);
  const rest = frac.slice(2).replace(/0+$/, '');
  return `$${whole.toLocaleString('en-US')}.${cents}${rest}`;
}

/**
 * An amount of the API ("9.959600", or "-0.500000" for an available balance below zero) as
 * formatMicros writes it; "—" when there is none. Text the API should never send is shown as it
 * came rather than guessed at (it is rendered as text, so it cannot inject anything).
 */
export function usd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const negative = amount.startsWith('-');
  try {
    const micros = toMicros(negative ? amount.slice(1) : amount);
    return formatMicros(negative ? -micros : micros);
  } catch {
    return amount;
  }
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const timeOnly = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d);
}

export function clock(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : timeOnly.format(d);
}

/**
 * Seconds between two instants, as "4.2 s", "42 s" or "3 min 5 s". Rounded once, to the unit
 * shown, before it is split into minutes and seconds: rounding the seconds after the split would
 * write 179.6 s as "2 min 60 s".
 */
export function elapsed(fromIso: string, toIso: string): string {
  const s = (Date.parse(toIso) - Date.parse(fromIso)) / 1000;
  if (!Number.isFinite(s) || s < 0) return '';
  const tenths = Math.round(s * 10);
  if (tenths < 100) return `${(tenths / 10).toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 60) return `${whole} s`;
  return `${Math.floor(whole / 60)} min ${whole % 60} s`;
}

/**
 * 00:00 of a YYYY-MM-DD day in the browser's time zone, `days` later; undefined for text that is
 * not a day of the calendar. The date must survive the round trip: new Date(2026, 1, 31) rolls
 * over into March, so "2026-02-31" is refused rather than read as 3 March.
 */
export function localMidnight(day: string, days = 0): Date | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(y, mo - 1, d);
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d) return undefined;
  date.setDate(date.getDate() + days);
  return date;
}

/** Why a range of days whose first day is after its last cannot be asked for (the jobs list's and the usage's). */
export const FROM_AFTER_TO = 'The “From” day is after the “To” day: nothing can match. Pick a “To” day on or after it.';

/** A day as YYYY-MM-DD in the browser's time zone. */
export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** The model's last path segments, short enough for a card: "model-a-2/medium". */
export function shortModel(type: string): string {
  const parts = type.split('/');
  return parts.length > 2 ? parts.slice(2).join('/') : type;
}
