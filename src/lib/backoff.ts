/**
 * When to retry a webhook delivery: capped, jittered exponential backoff over about three days.
 * The first attempt is made at once; after failed attempt n the next waits RETRY_DELAYS_MS[n-1],
 * varied by up to ±20% so that many deliveries failing together (a receiver's outage) do not
 * return together, and never more than 12 hours. After MAX_ATTEMPTS failures the delivery is
 * given up. docs/webhooks.md shows this table; a test checks the two agree.
 */

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The longest wait between two attempts, whatever the schedule, jitter or Retry-After say. */
export const MAX_RETRY_DELAY_MS = 12 * HOUR;

/** Each delay is multiplied by a factor drawn uniformly from [1 - JITTER, 1 + JITTER]. */
export const RETRY_JITTER = 0.2;

/**
 * The nominal wait after failed attempt n, at index n-1. Quick at first (a receiver restarting,
 * a dropped connection), then doubling up to the cap; the five 12-hour waits carry the schedule
 * past three days so a receiver down over a weekend still gets its deliveries.
 */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5 * SECOND,
  30 * SECOND,
  2 * MINUTE,
  10 * MINUTE,
  30 * MINUTE,
  1 * HOUR,
  2 * HOUR,
  4 * HOUR,
  8 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
  12 * HOUR,
]);

/** Attempts in all, the first included: one more than there are delays. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * How long to wait after `failedAttempts` attempts have failed (1 after the first), or undefined
 * when the delivery should be given up. `random` returns a number in [0, 1), as Math.random does;
 * 0 gives the shortest wait (-20%), values near 1 the longest (+20%, within the cap).
 */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number | undefined {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) {
    throw new RangeError(`failedAttempts must be an integer >= 1, got ${failedAttempts}`);
  }
  const nominal = RETRY_DELAYS_MS[failedAttempts - 1];
  if (nominal === undefined) return undefined;
  const factor = 1 - RETRY_JITTER + 2 * RETRY_JITTER * Math.min(1, Math.max(0, random()));
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(nominal * factor));
}

/**
 * The wait to use when the receiver sent `Retry-After` (on 429 and 503): the longer of the two,
 * so a receiver can slow us down but not hurry us, and never past the cap.
 */
export function withRetryAfter(backoffMs: number, retryAfterMs: number | undefined): number {
  return Math.min(MAX_RETRY_DELAY_MS, Math.max(backoffMs, retryAfterMs ?? 0));
}

const DELTA_SECONDS = /^\d+$/;
// The three date forms HTTP recipients must accept (RFC 9110 section 5.6.7): IMF-fixdate, the
// obsolete RFC 850 form and asctime. Matched first because Date.parse alone accepts almost
// anything ("1", "May 5") and would turn garbage into a date.
const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function utc(year: number, month: string, day: number, h: string, m: string, s: string): number | undefined {
  const [hh, mm, ss] = [Number(h), Number(m), Number(s)];
  const mi = MONTHS.indexOf(month);
  if (day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60) return undefined;
  const ms = Date.UTC(year, mi, day, hh, mm, Math.min(ss, 59));
  // Date.UTC rolls 31 Feb over into March; a date that does not exist is not a date.
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m) {
    // Two-digit years: the one that is not more than 50 years in the future (RFC 9110).
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME_DATE.exec(text);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

/**
 * A `Retry-After` header as milliseconds from `nowMs`: delta-seconds (`120`) or an HTTP-date
 * (`Wed, 21 Oct 2015 07:28:00 GMT`; a date already past gives 0). Undefined when absent or not
 * one of those forms (negative numbers, fractions, garbage), so the backoff alone decides.
 */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  const text = header?.trim();
  if (!text) return undefined;
  if (DELTA_SECONDS.test(text)) {
    const ms = Number(text) * SECOND;
    return Number.isFinite(ms) ? ms : undefined;
  }
  const at = parseHttpDate(text, nowMs);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

/**
 * The one exponential backoff of every retry loop that is not a webhook delivery (an upstream's
 * passing trouble, a process restart, a worker's claims): `baseMs` after the first failure,
 * doubling with each one after, never more than `maxMs`. `failures` counts the failures so far
 * (1 after the first); the exponent is clamped, so a long outage cannot overflow to Infinity.
 */
export function backoffMs(failures: number, baseMs: number, maxMs: number): number {
  const n = Number.isFinite(failures) ? Math.min(Math.max(1, Math.floor(failures)), 31) : 31;
  return Math.min(maxMs, baseMs * 2 ** (n - 1));
}
