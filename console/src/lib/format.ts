/** How the console writes amounts, times and sizes: one place, so every page reads the same. */

/** "$0.030000" style API amounts as "$0.03", keeping sub-cent precision when there is any. */
export function usd(amount: string | null | undefined): string {
  if (amount === null || amount === undefined) return '—';
  const n = Number(amount);
  if (!Number.isFinite(n)) return amount;
  const digits = Math.abs(n) > 0 && Math.abs(n) < 0.01 ? 6 : 2;
  const fixed = n.toFixed(digits).replace(/(\.\d\d\d*?)0+$/, '$1');
  return `$${fixed}`;
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

/** Seconds between two instants, as "4.2 s" or "3 min 5 s". */
export function elapsed(fromIso: string, toIso: string): string {
  const s = (Date.parse(toIso) - Date.parse(fromIso)) / 1000;
  if (!Number.isFinite(s) || s < 0) return '';
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

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
