/**
 * Timestamps are kept as integer microseconds since the epoch so that job creation times can be
 * strictly increasing (the pagination cursor depends on it) while still fitting in a JS number.
 */
export type Micros = number;

export function msToMicros(ms: number): Micros {
  return Math.trunc(ms) * 1000;
}

/** ISO 8601 UTC with six fractional digits, e.g. 2026-11-22T06:24:51.123456Z. */
export function formatMicros(us: Micros): string {
  const ms = Math.floor(us / 1000);
  const iso = new Date(ms).toISOString(); // ...SS.mmmZ
  const sub = String(us - ms * 1000).padStart(3, '0');
  return `${iso.slice(0, -1)}${sub}Z`;
}

/** formatMicros, with null for "never" (a time not yet reached: completed_at, last_used_at, ...). */
export function formatMicrosOrNull(us: Micros | null): string | null {
  return us === null ? null : formatMicros(us);
}

const ISO_RE =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * Parses an RFC 3339 date-time to microseconds, keeping sub-millisecond digits that Date would
 * drop. Digits past the sixth round up, so "before this time" still includes a stored time that
 * is earlier only by a fraction of a microsecond. A leap second (:60) is read as the next second.
 * Returns undefined for anything that is not a real calendar instant.
 */
export function parseIsoMicros(text: string): Micros | undefined {
  const m = ISO_RE.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m as unknown as string[];
  const sec = +s!;
  const base = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, Math.min(sec, 59));
  const check = new Date(base);
  if (check.getUTCFullYear() !== +y! || check.getUTCMonth() !== +mo! - 1 || check.getUTCDate() !== +d!) return undefined;
  if (+h! > 23 || +mi! > 59 || sec > 60) return undefined;
  let offsetMin = 0;
  if (zone!.toUpperCase() !== 'Z') {
    const sign = zone!.startsWith('-') ? -1 : 1;
    const oh = +zone!.slice(1, 3);
    const om = +zone!.slice(4, 6);
    if (oh > 23 || om > 59) return undefined;
    offsetMin = sign * (oh * 60 + om);
  }
  const roundUp = /[1-9]/.test(frac.slice(6)) ? 1 : 0;
  const fracMicros = Number(frac.padEnd(6, '0').slice(0, 6)) + roundUp;
  return (base + (sec === 60 ? 1000 : 0) - offsetMin * 60_000) * 1000 + fracMicros;
}

/** A calendar date (YYYY-MM-DD) as the instant it begins, 00:00:00 UTC, in milliseconds. */
export function parseDateOnly(text: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!);
  const d = new Date(ms);
  if (d.getUTCMonth() !== +m[2]! - 1 || d.getUTCDate() !== +m[3]!) return undefined;
  return ms;
}

/** RFC 1123 / IMF-fixdate, the form HTTP headers such as Sunset use. */
export function formatHttpDate(ms: number): string {
  return new Date(ms).toUTCString();
}
